package e2e

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"schedplug.dev/integration/testbed/testenv"
)

// Pod groups (kube-scheduler's GenericWorkload, beta and off by default in
// 1.37): a gang PodGroup is scheduled in one pod-group cycle, each member
// filtered, scored and reserved in turn, and every reserved member
// unreserved when the group does not fit. The PodGroup API is
// scheduling.k8s.io/v1beta1, which kube-apiserver serves only when asked.
var (
	podGroupAPIServerFlags = []string{"--feature-gates=GenericWorkload=true", "--runtime-config=scheduling.k8s.io/v1beta1=true"}
	podGroupSchedulerArgs  = []string{"--feature-gates=GenericWorkload=true"}
	// A node takes one member: 1500m of 2 CPUs.
	groupNode   = testenv.NodeResources{CPU: "2", Memory: "8Gi", Pods: 110}
	groupMember = "1500m"
)

const (
	groupSettleWithin = 30 * time.Second
	// The gang plugin's message for the members that fit when others did
	// not (GangScheduling's PlacementFeasible).
	gangShort = "cannot be satisfied"
)

// groupOutcome is one pod-group cycle's result as the API server shows it.
type groupOutcome struct {
	bound    map[string]string // member -> node, bound members only
	messages map[string]string // member -> PodScheduled=False message
}

// boundNames is the sorted list of bound members.
func (o groupOutcome) boundNames() []string {
	var out []string
	for name := range o.bound {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// createPodGroup creates a gang PodGroup of all the members (minCount is
// their number) and then the members.
func createPodGroup(ctx context.Context, s *stack, ns, group string, members []testenv.PodSpec) []string {
	s.t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: group},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(len(members))},
		}},
	}
	_, err := s.client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{})
	s.must(err)
	var names []string
	for _, m := range members {
		pod := testenv.MakePod(ns, m)
		name := group
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
		s.must(testenv.CreatePods(ctx, s.client, pod))
		names = append(names, m.Name)
	}
	return names
}

// groupMembers names n members of group, each asking for what spec gives.
func groupMembers(group string, n int, spec func(name string) testenv.PodSpec) []testenv.PodSpec {
	var out []testenv.PodSpec
	for i := 0; i < n; i++ {
		out = append(out, spec(fmt.Sprintf("%s-%d", group, i)))
	}
	return out
}

// waitGroupPlaced waits until every member is bound and the PodGroup says
// PodGroupInitiallyScheduled=True.
func waitGroupPlaced(ctx context.Context, s *stack, ns, group string, members []string) groupOutcome {
	s.t.Helper()
	placed, err := testenv.WaitForBound(ctx, s.client, ns, members, groupSettleWithin)
	if err != nil {
		out := readGroup(ctx, s, ns, members)
		s.t.Fatalf("pod group %s was not placed whole: %v; members' messages: %v", group, err, out.messages)
	}
	if status, msg := groupCondition(ctx, s, ns, group); status != metav1.ConditionTrue {
		s.t.Errorf("pod group %s: all members bound but %s is %q (%q)", group, schedulingv1beta1.PodGroupInitiallyScheduled, status, msg)
	}
	out := groupOutcome{bound: map[string]string{}, messages: map[string]string{}}
	for _, m := range members {
		out.bound[m] = placed[m]
	}
	return out
}

// waitGroupRejected waits until the PodGroup says its cycle failed
// (PodGroupInitiallyScheduled=False, Unschedulable) and every member is
// PodScheduled=False, and returns what the members show then.
func waitGroupRejected(ctx context.Context, s *stack, ns, group string, members []string) groupOutcome {
	s.t.Helper()
	var out groupOutcome
	var status metav1.ConditionStatus
	var msg string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, groupSettleWithin, true, func(ctx context.Context) (bool, error) {
		status, msg = groupCondition(ctx, s, ns, group)
		out = readGroup(ctx, s, ns, members)
		return status == metav1.ConditionFalse && len(out.messages) == len(members), nil
	})
	if err != nil {
		s.t.Fatalf("pod group %s: no failed pod-group cycle seen within %s (%s=%q %q; bound %v; messages %v)",
			group, groupSettleWithin, schedulingv1beta1.PodGroupInitiallyScheduled, status, msg, out.bound, out.messages)
	}
	s.t.Logf("pod group %s rejected: %q", group, msg)
	return out
}

// groupCondition is the PodGroup's PodGroupInitiallyScheduled status and
// message ("" before the scheduler wrote it).
func groupCondition(ctx context.Context, s *stack, ns, group string) (metav1.ConditionStatus, string) {
	pg, err := s.client.SchedulingV1beta1().PodGroups(ns).Get(ctx, group, metav1.GetOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, c := range pg.Status.Conditions {
		if c.Type == schedulingv1beta1.PodGroupInitiallyScheduled {
			return c.Status, c.Message
		}
	}
	return "", ""
}

func readGroup(ctx context.Context, s *stack, ns string, members []string) groupOutcome {
	out := groupOutcome{bound: map[string]string{}, messages: map[string]string{}}
	for _, m := range members {
		pod, err := s.client.CoreV1().Pods(ns).Get(ctx, m, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if pod.Spec.NodeName != "" {
			out.bound[m] = pod.Spec.NodeName
			continue
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
				out.messages[m] = c.Message
			}
		}
	}
	return out
}

// checkNoneBound fails unless the rejected group has no bound member and
// each member's message names either the native plugin's reason (the
// member that found no node) or the gang (members that fit before it), at
// least one the plugin's.
func checkNoneBound(t *testing.T, group string, out groupOutcome, reason string) {
	t.Helper()
	if len(out.bound) > 0 {
		t.Errorf("pod group %s did not fit but members were bound: %v", group, out.bound)
	}
	named := 0
	for m, msg := range out.messages {
		switch {
		case strings.Contains(msg, reason):
			named++
		case !strings.Contains(msg, gangShort):
			t.Errorf("member %s of the rejected group %s: message %q names neither %q nor the gang (%q)", m, group, msg, reason, gangShort)
		}
	}
	if named == 0 {
		t.Errorf("no member of the rejected group %s names %q: %v", group, reason, out.messages)
	}
}

// hwGroupPhases is what one stack did with the HwEncrypt groups, in the
// terms both implementations must agree on.
type hwGroupPhases struct {
	fits, short, shortAfterNode []string // bound members after each phase
}

// runHwEncryptGroups: five hw-encrypt nodes and three plain ones, each
// node taking one member. A group of three is placed whole on hw-encrypt
// nodes; a second group of three, with two hw-encrypt nodes left (and the
// plain nodes free), is placed not at all; a sixth hw-encrypt node makes
// it fit, and it is placed whole.
func runHwEncryptGroups(t *testing.T, s *stack) hwGroupPhases {
	t.Helper()
	ctx := s.ctx()
	ns := s.namespace("pod-groups")
	var nodes []*corev1.Node
	for i := 1; i <= 5; i++ {
		nodes = append(nodes, testenv.MakeNode(fmt.Sprintf("enc-%d", i), groupNode, hwNode))
	}
	for i := 1; i <= 3; i++ {
		nodes = append(nodes, testenv.MakeNode(fmt.Sprintf("plain-%d", i), groupNode, nil))
	}
	s.createNodes(ctx, nodes...)
	member := func(name string) testenv.PodSpec {
		return testenv.PodSpec{Name: name, Annotations: needsHw, CPU: groupMember}
	}
	checkOnEncrypting := func(group string, out groupOutcome) {
		t.Helper()
		used := map[string]string{}
		for m, node := range out.bound {
			if !strings.HasPrefix(node, "enc-") {
				t.Errorf("member %s of %s is on %s, which has no %s=true", m, group, node, hwLabel)
			}
			if other, ok := used[node]; ok {
				t.Errorf("members %s and %s of %s share node %s, which has room for one", m, other, group, node)
			}
			used[node] = m
		}
	}
	var phases hwGroupPhases

	start := time.Now()
	fits := createPodGroup(ctx, s, ns, "fits", groupMembers("fits", 3, member))
	out := waitGroupPlaced(ctx, s, ns, "fits", fits)
	checkOnEncrypting("fits", out)
	phases.fits = out.boundNames()
	t.Logf("group fits: %d/%d members placed in %s: %v", len(out.bound), len(fits), time.Since(start).Round(time.Millisecond), out.bound)

	start = time.Now()
	short := createPodGroup(ctx, s, ns, "short", groupMembers("short", 3, member))
	out = waitGroupRejected(ctx, s, ns, "short", short)
	checkNoneBound(t, "short", out, hwReason)
	phases.short = out.boundNames()
	t.Logf("group short: %d/%d members placed, rejected in %s: %v", len(out.bound), len(short), time.Since(start).Round(time.Millisecond), out.messages)

	start = time.Now()
	s.createNodes(ctx, testenv.MakeNode("enc-6", groupNode, hwNode))
	out = waitGroupPlaced(ctx, s, ns, "short", short)
	checkOnEncrypting("short", out)
	phases.shortAfterNode = out.boundNames()
	t.Logf("group short after enc-6 joined: %d/%d members placed in %s: %v", len(out.bound), len(short), time.Since(start).Round(time.Millisecond), out.bound)
	return phases
}

// TestPodGroupNativeFilter: gang PodGroups whose members only HwEncrypt's
// nodes admit, through the shim and schedplug-host, then the same with
// HwEncrypt's Go twin in kube-scheduler: each phase binds the same members.
// The members of a group are identical, so the shim's kept verdicts and
// signatures are shared across the members' cloned cycle states: a
// verdict carried from one member's cycle to the next wrongly (a node one
// member took looking free to the next) would bind two members on one node
// or place the short group.
func TestPodGroupNativeFilter(t *testing.T) {
	nativeAndTwin(t, "bound members per phase (fits, short, short after a node joined)",
		func(t *testing.T) hwGroupPhases {
			return runHwEncryptGroups(t, startPodGroupStack(t, stackOptions{
				Plugins: []testenv.NativePlugin{{Name: "HwEncrypt", FailurePolicy: "Fail", Timeout: "500ms"}},
			}))
		},
		func(t *testing.T) hwGroupPhases {
			return runHwEncryptGroups(t, startPodGroupTwinStack(t, "GoHwEncrypt"))
		})
}

// startPodGroupStack starts a stack with pod-group scheduling on.
func startPodGroupStack(t *testing.T, o stackOptions) *stack {
	t.Helper()
	o.APIServerFlags = append(o.APIServerFlags, podGroupAPIServerFlags...)
	o.SchedulerArgs = append(o.SchedulerArgs, podGroupSchedulerArgs...)
	return startStackWith(t, o)
}

// startPodGroupTwinStack runs the Go twin goPlugin alone in the twin build
// of kube-scheduler (the host, which the shim needs, serves HwEncrypt).
func startPodGroupTwinStack(t *testing.T, goPlugin string) *stack {
	t.Helper()
	return startPodGroupStack(t, stackOptions{
		Plugins:     []testenv.NativePlugin{{Name: goPlugin}},
		HostPlugins: []testenv.NativePlugin{{Name: "HwEncrypt"}},
		Twin:        true,
	})
}

// nativeAndTwin runs a scenario on the native stack and on the Go twin's
// and fails when what they report (what) differs.
func nativeAndTwin[T any](t *testing.T, what string, native, goTwin func(t *testing.T) T) {
	t.Helper()
	var n, g T
	t.Run("native", func(t *testing.T) { n = native(t) })
	t.Run("twin", func(t *testing.T) { g = goTwin(t) })
	if t.Failed() {
		return
	}
	if fmt.Sprint(n) != fmt.Sprint(g) {
		t.Errorf("%s differ: native %v, Go twin %v", what, n, g)
	}
}

// TestPodGroupDeviceShareUnreserve: DeviceShare in pod-group cycles on
// nodes of 4 devices. On two nodes, a pair of members of 3 devices each is
// placed whole, one per node: the second member's Filter, in the same
// cycle, must count the first one's reservation (the members are
// identical, so a verdict kept from the first member's cycle state would
// send both to the node Score prefers, and the group would fail). On two
// other nodes, a group of three such members does not fit, so
// kube-scheduler unreserves every member it reserved. Then two pods of 4
// devices each are bound there, one per node: each node must be wholly
// free again, so no member's reservation was left behind on either. The
// same with DeviceShare's Go twin binds the same members in each phase.
func TestPodGroupDeviceShareUnreserve(t *testing.T) {
	nativeAndTwin(t, "bound pods per phase (pair, greedy, whole)",
		func(t *testing.T) deviceGroupPhases {
			dir, err := testenv.DeviceSharePluginDir()
			if err != nil {
				t.Fatal(err)
			}
			s := startPodGroupStack(t, stackOptions{
				// A fresh host has no bindings in flight to wait for.
				Plugins: []testenv.NativePlugin{{Name: "DeviceShare", FailurePolicy: "Fail", Timeout: "500ms",
					Args: map[string]any{"startupSettle": "100ms"}}},
				PluginDir: dir,
			})
			phases := runDeviceGroups(t, s)
			checkUnreserved(t, s, len(phases.pair)+len(phases.whole))
			return phases
		},
		func(t *testing.T) deviceGroupPhases {
			return runDeviceGroups(t, startPodGroupTwinStack(t, "GoDeviceShare"))
		})
}

// deviceGroupPhases is what one stack did with the DeviceShare groups.
type deviceGroupPhases struct {
	pair, greedy, whole []string // bound pods after each phase
}

func runDeviceGroups(t *testing.T, s *stack) deviceGroupPhases {
	t.Helper()
	var phases deviceGroupPhases
	ctx := s.ctx()
	ns := s.namespace("device-groups")
	// Two nodes for each case, kept apart by a node selector.
	const caseLabel = "e2e.schedplug.dev/case"
	var nodes []*corev1.Node
	for i := 1; i <= 4; i++ {
		group := "pair"
		if i > 2 {
			group = "greedy"
		}
		nodes = append(nodes, testenv.MakeNode(fmt.Sprintf("dev-%d", i), bigNode,
			map[string]string{deviceCountLabel: strconv.Itoa(devicesPerNode), caseLabel: group}))
	}
	s.createNodes(ctx, nodes...)
	onPairNodes, onGreedyNodes := map[string]string{caseLabel: "pair"}, map[string]string{caseLabel: "greedy"}

	start := time.Now()
	pair := createPodGroup(ctx, s, ns, "pair", groupMembers("pair", 2, func(name string) testenv.PodSpec {
		return devicePodSpec(name, 3, onPairNodes)
	}))
	out := waitGroupPlaced(ctx, s, ns, "pair", pair)
	pods, err := deviceState(ctx, s, ns)
	s.must(err)
	phases.pair = out.boundNames()
	if pods["pair-0"].node == pods["pair-1"].node {
		t.Errorf("both members of pair are on %s, which has %d devices for their 6", pods["pair-0"].node, devicesPerNode)
	}
	t.Logf("group pair (2x3 devices on 2x%d): %d/%d members placed in %s: pair-0 on %s %v, pair-1 on %s %v", devicesPerNode,
		len(out.bound), len(pair), time.Since(start).Round(time.Millisecond),
		pods["pair-0"].node, pods["pair-0"].devices, pods["pair-1"].node, pods["pair-1"].devices)

	start = time.Now()
	greedy := createPodGroup(ctx, s, ns, "greedy", groupMembers("greedy", 3, func(name string) testenv.PodSpec {
		return devicePodSpec(name, 3, onGreedyNodes)
	}))
	out = waitGroupRejected(ctx, s, ns, "greedy", greedy)
	checkNoneBound(t, "greedy", out, tooFewDevices)
	phases.greedy = out.boundNames()
	t.Logf("group greedy (3x3 devices on 2x%d): %d/%d members placed, rejected in %s: %v",
		devicesPerNode, len(out.bound), len(greedy), time.Since(start).Round(time.Millisecond), out.messages)

	start = time.Now()
	whole := []string{"whole-1", "whole-2"}
	for _, name := range whole {
		s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, devicePodSpec(name, devicesPerNode, onGreedyNodes))))
	}
	if _, err := testenv.WaitForBound(ctx, s.client, ns, whole, groupSettleWithin); err != nil {
		msgs := readGroup(ctx, s, ns, whole).messages
		t.Fatalf("pods asking for every device of a node: %v (messages %v): a failed group member's reservation was not released", err, msgs)
	}
	pods, err = deviceState(ctx, s, ns)
	s.must(err)
	phases.whole = whole
	if pods["whole-1"].node == pods["whole-2"].node {
		t.Errorf("whole-1 and whole-2 are both on %s, which has %d devices", pods["whole-1"].node, devicesPerNode)
	}
	if _, overlaps := deviceOwners(pods); len(overlaps) > 0 {
		t.Errorf("devices held by more than one pod: %v", overlaps)
	}
	for _, m := range greedy {
		if pods[m].node != "" {
			t.Errorf("member %s of the group that cannot fit was bound to %s", m, pods[m].node)
		}
	}
	t.Logf("after the group failed: whole-1 on %s %v, whole-2 on %s %v, in %s",
		pods["whole-1"].node, pods["whole-1"].devices, pods["whole-2"].node, pods["whole-2"].devices, time.Since(start).Round(time.Millisecond))
	return phases
}

// checkUnreserved: every reservation the host made is either a bound
// pod's or was undone by its Unreserve. The group that cannot fit is
// retried meanwhile: a count read in the middle of its cycle is read
// again.
func checkUnreserved(t *testing.T, s *stack, bound int) {
	t.Helper()
	var reserves, unreserves float64
	err := wait.PollUntilContextTimeout(s.ctx(), 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		metrics, err := s.scheduler.Metrics()
		if err != nil {
			return false, nil
		}
		reserves, unreserves = shimRPCs(metrics, "Reserve"), shimRPCs(metrics, "Unreserve")
		return reserves-unreserves == float64(bound), nil
	})
	if err != nil {
		t.Errorf("the shim made %v Reserve and %v Unreserve calls to the host; want %d more Reserve (the bound pods') than Unreserve", reserves, unreserves, bound)
	}
	t.Logf("shim calls to the host: %v Reserve, %v Unreserve", reserves, unreserves)
}

// shimRPCs is the shim's count of calls of method to the host, all codes.
func shimRPCs(metrics, method string) float64 {
	line := regexp.MustCompile(`(?m)^schedplug_shim_rpcs_total\{[^}]*method="` + method + `"[^}]*\} (\S+)$`)
	var sum float64
	for _, m := range line.FindAllStringSubmatch(metrics, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
