package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"schedplug.dev/integration/testbed/testenv"
)

// DeviceShare (plugins/device-share): nodes labelled with a device count,
// pods annotated with how many they need; Reserve picks the indices,
// PreBind writes them on the pod as a label and an annotation.
const (
	deviceCountLabel   = "devices.schedplug.dev/count"
	deviceRequest      = "devices.schedplug.dev/request"
	deviceAssigned     = "devices.schedplug.dev/assigned"
	tooFewDevices      = "node(s) had too few free devices"
	devicesPerNode     = 4
	deviceNodes        = 3
	deviceClientQPS    = 5
	deviceSettleWithin = 120 * time.Second
)

// startDeviceStack runs DeviceShare alone, from its own plugin directory.
// kube-scheduler's API client is held to a few requests a second: PreBind's
// patch and the binding queue up behind each other, so many pods sit
// between Reserve and bound at once and Filter has to count the
// reservations in flight, not only the labels of bound pods.
func startDeviceStack(t *testing.T) *stack {
	t.Helper()
	dir, err := testenv.DeviceSharePluginDir()
	if err != nil {
		t.Fatal(err)
	}
	return startStackWith(t, stackOptions{
		Plugins:   []testenv.NativePlugin{{Name: "DeviceShare", FailurePolicy: "Fail", Timeout: "500ms"}},
		PluginDir: dir,
		ClientQPS: deviceClientQPS,
	})
}

func createDeviceNodes(t *testing.T, s *stack) []string {
	t.Helper()
	var names []string
	var nodes []*corev1.Node
	for i := 1; i <= deviceNodes; i++ {
		name := fmt.Sprintf("dev-%d", i)
		nodes = append(nodes, testenv.MakeNode(name, bigNode,
			map[string]string{deviceCountLabel: strconv.Itoa(devicesPerNode)}))
		names = append(names, name)
	}
	s.createNodes(s.ctx(), nodes...)
	return names
}

func devicePodSpec(name string, request int, nodeSelector map[string]string) testenv.PodSpec {
	return testenv.PodSpec{Name: name, CPU: "50m", NodeSelector: nodeSelector,
		Annotations: map[string]string{deviceRequest: strconv.Itoa(request)}}
}

// devicePod is what the API server says about one DeviceShare pod.
type devicePod struct {
	name    string
	node    string // "" while not bound
	request int
	devices []int // PreBind's label; nil before PreBind
}

// deviceState lists the namespace's pods. A pod whose label and annotation
// disagree, whose count is not its request or whose indices are not the
// node's is an error: PreBind wrote it wrong.
func deviceState(ctx context.Context, s *stack, ns string) (map[string]devicePod, error) {
	list, err := s.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", ns, err)
	}
	out := map[string]devicePod{}
	for _, p := range list.Items {
		d, err := readDevicePod(&p)
		if err != nil {
			return nil, err
		}
		out[p.Name] = d
	}
	return out, nil
}

func readDevicePod(p *corev1.Pod) (devicePod, error) {
	request, err := strconv.Atoi(p.Annotations[deviceRequest])
	if err != nil {
		return devicePod{}, fmt.Errorf("pod %s: request annotation %q: %v", p.Name, p.Annotations[deviceRequest], err)
	}
	d := devicePod{name: p.Name, node: p.Spec.NodeName, request: request}
	label, labelled := p.Labels[deviceAssigned]
	annotation, annotated := p.Annotations[deviceAssigned]
	if !labelled && !annotated {
		if d.node != "" {
			return d, fmt.Errorf("pod %s is bound to %s without the %s label and annotation PreBind writes", p.Name, d.node, deviceAssigned)
		}
		return d, nil
	}
	if strings.ReplaceAll(label, "-", ",") != annotation {
		return d, fmt.Errorf("pod %s: label %s=%q and annotation %q disagree", p.Name, deviceAssigned, label, annotation)
	}
	for _, part := range strings.Split(label, "-") {
		i, err := strconv.Atoi(part)
		if err != nil || i < 0 || i >= devicesPerNode {
			return d, fmt.Errorf("pod %s: label %s=%q holds %q, not a device index of a %d-device node", p.Name, deviceAssigned, label, part, devicesPerNode)
		}
		d.devices = append(d.devices, i)
	}
	if len(d.devices) != request {
		return d, fmt.Errorf("pod %s asked for %d devices and got %q", p.Name, request, label)
	}
	return d, nil
}

// deviceOwners maps node -> device index -> the bound pods holding it, and
// lists every index held by more than one pod.
func deviceOwners(pods map[string]devicePod) (map[string]map[int][]string, []string) {
	owners := map[string]map[int][]string{}
	for _, p := range pods {
		if p.node == "" {
			continue
		}
		if owners[p.node] == nil {
			owners[p.node] = map[int][]string{}
		}
		for _, i := range p.devices {
			owners[p.node][i] = append(owners[p.node][i], p.name)
		}
	}
	var overlaps []string
	for node, byIndex := range owners {
		for i, names := range byIndex {
			if len(names) > 1 {
				sort.Strings(names)
				overlaps = append(overlaps, fmt.Sprintf("device %d of %s is assigned to %s", i, node, strings.Join(names, " and ")))
			}
		}
	}
	sort.Strings(overlaps)
	return owners, overlaps
}

func freeDevices(owners map[string]map[int][]string, node string) int {
	return devicesPerNode - len(owners[node])
}

// deviceTable renders node: index=pod ... for the log.
func deviceTable(owners map[string]map[int][]string, nodes []string) string {
	var b strings.Builder
	for _, node := range nodes {
		fmt.Fprintf(&b, "\n  %s:", node)
		for i := 0; i < devicesPerNode; i++ {
			holder := "-"
			if names := owners[node][i]; len(names) > 0 {
				holder = strings.Join(names, "+")
			}
			fmt.Fprintf(&b, " %d=%s", i, holder)
		}
	}
	return b.String()
}

// waitDevicesSettled polls until every pod is bound, or pending with
// DeviceShare's reason while no node has the devices it asks for. Every
// poll checks that no device is assigned twice: an overlap fails the test
// at once.
func waitDevicesSettled(t *testing.T, s *stack, ns string, nodes []string) map[string]devicePod {
	t.Helper()
	ctx := s.ctx()
	var last map[string]devicePod
	var why string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, deviceSettleWithin, true, func(ctx context.Context) (bool, error) {
		pods, err := deviceState(ctx, s, ns)
		if err != nil {
			return false, err
		}
		last = pods
		owners, overlaps := deviceOwners(pods)
		if len(overlaps) > 0 {
			return false, fmt.Errorf("devices assigned twice: %s%s", strings.Join(overlaps, "; "), deviceTable(owners, nodes))
		}
		for _, p := range pods {
			if p.node != "" {
				continue
			}
			for _, node := range nodes {
				if freeDevices(owners, node) >= p.request {
					why = fmt.Sprintf("pod %s (%d devices) is pending while %s has %d free", p.name, p.request, node, freeDevices(owners, node))
					return false, nil
				}
			}
			msg, err := testenv.FailedSchedulingMessage(ctx, s.client, ns, p.name)
			if err != nil || !strings.Contains(msg, tooFewDevices) {
				why = fmt.Sprintf("pod %s is pending without DeviceShare's reason (last FailedScheduling message %q)", p.name, msg)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		owners, _ := deviceOwners(last)
		t.Fatalf("%v (last: %s)%s", err, why, deviceTable(owners, nodes))
	}
	return last
}

func waitPodGone(t *testing.T, s *stack, ns, name string) {
	t.Helper()
	ctx := s.ctx()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s still exists 30s after its deletion", ns, name)
	}
}

// Many pods asking for 1 or 2 devices at once, more than the nodes have,
// with slow bindings: every pod ends bound with distinct devices of its
// node, or pending with DeviceShare's reason while no node has room for it;
// a deleted pod's devices go to the next pod.
func TestDeviceShareAssignsDistinctDevices(t *testing.T) {
	s := startDeviceStack(t)
	ctx := s.ctx()
	ns := s.namespace("devices")
	nodes := createDeviceNodes(t, s)

	// 14 pods, 21 devices asked of 12: some must wait.
	const total = 14
	var pods []*corev1.Pod
	for i := 0; i < total; i++ {
		pods = append(pods, testenv.MakePod(ns, devicePodSpec(fmt.Sprintf("dev-pod-%02d", i), 1+i%2, nil)))
	}
	s.must(testenv.CreatePods(ctx, s.client, pods...))

	state := waitDevicesSettled(t, s, ns, nodes)
	owners, _ := deviceOwners(state)
	bound, pending := 0, 0
	for _, p := range state {
		if p.node != "" {
			bound++
		} else {
			pending++
		}
	}
	t.Logf("%d pods bound, %d pending with %q; devices:%s", bound, pending, tooFewDevices, deviceTable(owners, nodes))
	if pending == 0 {
		t.Errorf("all %d pods were bound although they asked for more devices than the %d nodes have", total, deviceNodes)
	}

	// A deleted pod's devices go to the next pod. The pending pods go
	// first, so that nothing else competes for them.
	for _, p := range state {
		if p.node == "" {
			s.must(s.client.CoreV1().Pods(ns).Delete(ctx, p.name, metav1.DeleteOptions{}))
			waitPodGone(t, s, ns, p.name)
		}
	}
	var victim devicePod
	for _, p := range state {
		if p.node != "" && (victim.name == "" || p.request > victim.request || (p.request == victim.request && p.name < victim.name)) {
			victim = p
		}
	}
	s.must(s.client.CoreV1().Pods(ns).Delete(ctx, victim.name, metav1.DeleteOptions{}))
	waitPodGone(t, s, ns, victim.name)
	delete(state, victim.name)
	owners, _ = deviceOwners(state)
	want := freeDevices(owners, victim.node)
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, devicePodSpec("reuser", want, hostnameSelector(victim.node)))))
	if _, err := testenv.WaitForBound(ctx, s.client, ns, []string{"reuser"}, 60*time.Second); err != nil {
		msg, _ := testenv.FailedSchedulingMessage(ctx, s.client, ns, "reuser")
		t.Fatalf("%v: pod reuser (%d devices, pinned to %s, where %s held %v) was not bound; FailedScheduling: %q",
			err, want, victim.node, victim.name, victim.devices, msg)
	}
	state = waitDevicesSettled(t, s, ns, nodes)
	reuser := state["reuser"]
	held := map[int]bool{}
	for _, i := range reuser.devices {
		held[i] = true
	}
	for _, i := range victim.devices {
		if !held[i] {
			t.Errorf("pod reuser got devices %v of %s; want every free one, among them %v of the deleted pod %s", reuser.devices, victim.node, victim.devices, victim.name)
			break
		}
	}
	owners, _ = deviceOwners(state)
	t.Logf("%s deleted (devices %v of %s); reuser got %v; devices:%s", victim.name, victim.devices, victim.node, reuser.devices, deviceTable(owners, nodes))
}

// The host is killed and restarted while pods that fill every device are
// scheduled, with slow bindings. The restarted plugin has no reservations:
// it rebuilds the used devices from the bound pods' labels, hands out none
// until the bindings answered before the crash can have reached the node
// view (its startupSettle, 10 s), and a pod it reserved before the crash
// fails its PreBind and is scheduled again. Every pod ends bound, no
// device twice.
func TestDeviceShareHostRestart(t *testing.T) {
	s := startDeviceStack(t)
	ctx := s.ctx()
	ns := s.namespace("devices-restart")
	nodes := createDeviceNodes(t, s)

	// A first pod bound shows the plugin past its startupSettle, so that
	// the batch below is being reserved and bound when the host dies.
	s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, devicePodSpec("probe", 1, nil))))
	if _, err := testenv.WaitForBound(ctx, s.client, ns, []string{"probe"}, 60*time.Second); err != nil {
		msg, _ := testenv.FailedSchedulingMessage(ctx, s.client, ns, "probe")
		t.Fatalf("%v; FailedScheduling: %q", err, msg)
	}
	s.must(s.client.CoreV1().Pods(ns).Delete(ctx, "probe", metav1.DeleteOptions{}))
	waitPodGone(t, s, ns, "probe")

	// One device each, as many pods as devices: every pod fits however
	// they are packed, and only if no device is lost or given twice.
	const total = deviceNodes * devicesPerNode
	var names []string
	created := make(chan error, 1)
	go func() {
		for i := 0; i < total; i++ {
			name := fmt.Sprintf("restart-pod-%02d", i)
			if err := testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, devicePodSpec(name, 1, nil))); err != nil {
				created <- err
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		created <- nil
	}()
	for i := 0; i < total; i++ {
		names = append(names, fmt.Sprintf("restart-pod-%02d", i))
	}

	time.Sleep(700 * time.Millisecond)
	before, err := deviceState(ctx, s, ns)
	s.must(err)
	s.host.Kill()
	labelled := 0
	for _, p := range before {
		if p.devices != nil {
			labelled++
		}
	}
	t.Logf("host killed with %d pods created, %d with devices written", len(before), labelled)
	time.Sleep(2 * time.Second)
	s.must(s.host.StartAndWait(30 * time.Second))
	s.must(<-created)

	if _, err := testenv.WaitForBound(ctx, s.client, ns, names, deviceSettleWithin); err != nil {
		state, _ := deviceState(ctx, s, ns)
		owners, _ := deviceOwners(state)
		t.Fatalf("%v%s", err, deviceTable(owners, nodes))
	}
	state := waitDevicesSettled(t, s, ns, nodes)
	owners, _ := deviceOwners(state)
	if len(state) != total {
		t.Errorf("%d pods exist, want %d: pods were lost", len(state), total)
	}
	t.Logf("all %d pods bound after the restart; devices:%s", total, deviceTable(owners, nodes))
	if !s.scheduler.Running() {
		t.Errorf("kube-scheduler exited while the host was down: %v", s.scheduler.ExitError())
	}
}
