// What native plugins see of pods and nodes on a real cluster: the data probes,
// and NodeNumber reading spec.nodeName. One file: both tests check the data the
// shim converts from the same cluster objects, with the profile handle and
// score helpers below.

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/shim"
	"schedplug.dev/integration/testbed/testenv"
)

// dataConfig is the profile of TestPodAndNodeDataOnARealCluster: PodsOnNode
// is the only Score plugin (so placements follow the pods already on each
// node), PodDataProbe filters, NodeNumber (the SDK example, C++) scores too
// but gives every node the same 10 here: kube-scheduler only schedules pods
// whose spec.nodeName is empty. NodeUnschedulable is off so the probe sees
// the cordoned node too; the volume plugins are off because this cluster
// runs no PersistentVolume controller to bind the v1.3 probe's claims.
func dataConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: default-scheduler
    percentageOfNodesToScore: 100
    plugins:
      multiPoint:
        enabled:
          - name: PodsOnNode
          - name: PodDataProbe
          - name: NodeNumber
        disabled:
          - name: VolumeBinding
          - name: VolumeRestrictions
          - name: VolumeZone
          - name: NodeVolumeLimits
      filter:
        disabled:
          - name: NodeUnschedulable
      score:
        disabled:
          - name: "*"
        enabled:
          - name: PodsOnNode
            weight: 5
          - name: NodeNumber
            weight: 1
`, kubeconfig)
}

// labelledPod is a test pod with an "app" label, bound to `node` when it is
// not empty (as if another scheduler had placed it), else pending.
func labelledPod(ns, name, app, node string) *corev1.Pod {
	p := testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "100m"})
	p.Labels = map[string]string{"app": app}
	p.Spec.NodeName = node
	return p
}

// TestPodAndNodeDataOnARealCluster runs ABI v1.2's declared data through a
// real kube-apiserver, kube-scheduler with the shim, and schedplug-host:
// PodsOnNode (host/tests/server/data_plugins/pods_on_node.c) scores a node
// by the pods with the pod's "app" label already on it, read from the
// node's compact pod list, so each pending pod must land where most of its
// kind are, and must follow pods that arrive and leave after the host's
// node table was filled (the list travels in the node-table deltas).
// PodDataProbe (pod_data_probe.c) rejects a "probe" pod with a reason
// spelling out the pod and node data it saw; kube-scheduler's
// FailedScheduling event carries it back. Two more probe pods do the same
// for ABI v1.3's data: volumes and node images, then affinity and spread
// terms. Then, on the same cluster, a real preemption nominates a node and
// PodDataProbe sees it.
func TestPodAndNodeDataOnARealCluster(t *testing.T) {
	pluginDir, err := testenv.PluginDirOf(t.TempDir(), "pods_on_node.so", "pod_data_probe.so", "node_number.so")
	if err != nil {
		t.Fatal(err)
	}
	s := startStackWith(t, stackOptions{ConfigYAML: dataConfig, PluginDir: pluginDir})
	ctx := s.ctx()
	ns := s.namespace("pod-data")
	s.must(testenv.CreatePriorityClasses(ctx, s.client, map[string]int32{"probe-high": 100}))

	cordoned := testenv.MakeNode("node-c", bigNode, nil)
	cordoned.Spec.Unschedulable = true
	// node-a holds two images (status.images, written through the status
	// subresource as the rest of the status: there is no kubelet).
	nodeA := testenv.MakeNode("node-a", bigNode, nil)
	nodeA.Status.Images = []corev1.ContainerImage{
		{Names: []string{"registry.example/app@sha256:0123", "registry.example/app:1"}, SizeBytes: 123456789},
		{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 700000},
	}
	s.createNodes(ctx, nodeA, testenv.MakeNode("node-b", bigNode, nil), cordoned)

	// Already placed: node-a has one web and three db pods, node-b two web.
	s.must(testenv.CreatePods(ctx, s.client,
		labelledPod(ns, "web-a1", "web", "node-a"),
		labelledPod(ns, "db-a1", "db", "node-a"), labelledPod(ns, "db-a2", "db", "node-a"), labelledPod(ns, "db-a3", "db", "node-a"),
		labelledPod(ns, "web-b1", "web", "node-b"), labelledPod(ns, "web-b2", "web", "node-b")))
	place := func(name, app, want string) {
		t.Helper()
		s.must(testenv.CreatePods(ctx, s.client, labelledPod(ns, name, app, "")))
		placed, err := testenv.WaitForBound(ctx, s.client, ns, []string{name}, 60*time.Second)
		s.must(err)
		if placed[name] != want {
			t.Errorf("pod %s (app=%s) went to %s, want %s: PodsOnNode favours the node with most app=%s pods", name, app, placed[name], want, app)
		}
	}
	place("web-1", "web", "node-b") // web: a 1, b 2, c 0
	place("db-1", "db", "node-a")   // db: a 3, b 0, c 0

	// Pods arrive on node-a after the host has its table: four web pods
	// there now (web-a1 and three new), three on node-b (web-b1, web-b2,
	// web-1).
	s.must(testenv.CreatePods(ctx, s.client,
		labelledPod(ns, "web-a2", "web", "node-a"), labelledPod(ns, "web-a3", "web", "node-a"), labelledPod(ns, "web-a4", "web", "node-a")))
	waitForPodsOn(t, ctx, s, ns, "node-a", 8) // 4 web + 3 db + db-1
	place("web-2", "web", "node-a")

	// And leave: node-a keeps only web-2, node-b has three.
	zero := int64(0)
	for _, name := range []string{"web-a1", "web-a2", "web-a3", "web-a4"} {
		s.must(s.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	}
	waitForPodsOn(t, ctx, s, ns, "node-a", 5) // 3 db + db-1 + web-2
	place("web-3", "web", "node-b")

	// The probe: every pod field the data bits cover, from a real pod.
	yes := true
	probe := testenv.MakePod(ns, testenv.PodSpec{Name: "probe", Priority: "probe-high"})
	probe.Labels = map[string]string{"probe": "yes"}
	probe.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: types.UID("0b8f3c9e-1111-4a2b-9c3d-000000000001"), Controller: &yes}}
	c := &probe.Spec.Containers[0]
	c.Image = "registry.example/probe:1"
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 9090, Protocol: corev1.ProtocolTCP}}
	_, err = s.client.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{})
	s.must(err)
	saw := func(unschedulable int) string {
		return fmt.Sprintf("saw nodeName=- nominated=- class=probe-high owner=ReplicaSet/rs(controller) "+
			"containers=1 image=registry.example/probe:1 cpu=250/500 port=8080/TCP/9090 "+
			"unschedulable=%d Ready=True capacity.cpu=16000", unschedulable)
	}
	msg, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "probe", "saw nodeName=", 60*time.Second)
	s.must(err)
	t.Logf("FailedScheduling message for %s/probe: %q", ns, msg)
	for _, want := range []string{"1 " + saw(1), "2 " + saw(0)} {
		if !strings.Contains(msg, want) {
			t.Errorf("FailedScheduling message for the probe pod lacks %q:\n%s", want, msg)
		}
	}

	// The ABI v1.3 probe: a pod with a PersistentVolumeClaim volume, a
	// generic ephemeral volume and a ConfigMap volume.
	v13 := testenv.MakePod(ns, testenv.PodSpec{Name: "probe-v13"})
	v13.Labels = map[string]string{"probe": "v1.3"}
	v13.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "probe-data", ReadOnly: true}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			}}}}},
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
	}
	s.must(testenv.CreatePods(ctx, s.client, v13))
	msg, err = testenv.WaitForFailedScheduling(ctx, s.client, ns, "probe-v13", "v1.3 volumes=", 60*time.Second)
	s.must(err)
	t.Logf("FailedScheduling message for %s/probe-v13: %q", ns, msg)
	volumes := "v1.3 volumes=3 data:persistentVolumeClaim:probe-data:ro scratch:ephemeral:probe-v13-scratch:rw"
	for _, want := range []string{
		"1 " + volumes + " images=2 registry.example/app@sha256:0123/123456789",
		"2 " + volumes + " images=0",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("FailedScheduling message for the v1.3 probe pod lacks %q:\n%s", want, msg)
		}
	}

	// And its affinity and spread terms, chosen so that kube-scheduler's
	// own NodeAffinity, PodTopologySpread and InterPodAffinity filters pass
	// every node and the probe's reason is the one reported.
	host := "kubernetes.io/hostname"
	aff := testenv.MakePod(ns, testenv.PodSpec{Name: "probe-affinity"})
	aff.Labels = map[string]string{"probe": "v1.3-affinity"}
	aff.Spec.Affinity = &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: host, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-x"}}}}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 30,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpExists}}}}},
		},
		PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10,
			PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: host, LabelSelector: &metav1.LabelSelector{}}}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: host, Namespaces: []string{ns},
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"none"}}}}}}},
	}
	aff.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: host,
		WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	s.must(testenv.CreatePods(ctx, s.client, aff))
	msg, err = testenv.WaitForFailedScheduling(ctx, s.client, ns, "probe-affinity", "v1.3 nodeAffinity=", 60*time.Second)
	s.must(err)
	t.Logf("FailedScheduling message for %s/probe-affinity: %q", ns, msg)
	want := "3 v1.3 nodeAffinity=1/1 kubernetes.io/hostname:NotIn:node-x pref=30:gpu:Exists spread=1 " +
		"1/kubernetes.io/hostname/ScheduleAnyway/min=0/-/-/{app=web} affinity=0/1/1/0 pref=10/kubernetes.io/hostname/{} " +
		"anti=kubernetes.io/hostname/{app:In:none}/ns=1"
	if !strings.Contains(msg, want) {
		t.Errorf("FailedScheduling message for the affinity probe pod lacks %q:\n%s", want, msg)
	}

	// status.nominatedNodeName, set by a real preemption (nominated_test.go).
	checkNominatedNodeAfterPreemption(t, s, ns)
}

// waitForPodsOn waits until kube-apiserver lists `n` pods bound to `node`
// in namespace ns. kube-scheduler receives pod events in order, so a pod
// created afterwards is scheduled with these changes in its cache.
func waitForPodsOn(t *testing.T, ctx context.Context, s *stack, ns, node string, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := s.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return false, nil
		}
		return len(pods.Items) == n, nil
	})
	if err != nil {
		t.Fatalf("node %s never had %d pods of namespace %s: %v", node, n, ns, err)
	}
}

// nodeNumberConfig has two profiles: NodeNumber as it is, and reversed.
func nodeNumberConfig() string {
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: node-number
    plugins:
      multiPoint:
        enabled:
          - name: NodeNumber
  - schedulerName: node-number-reverse
    plugins:
      multiPoint:
        enabled:
          - name: NodeNumber
    pluginConfig:
      - name: NodeNumber
        args:
          reverse: true
`
}

// profileHandle is the part of kube-scheduler's framework handle the shim's
// PreScore and Score use: the profile's name, and no snapshot (the shim
// then uses the nodes PreScore is given).
type profileHandle struct {
	fwk.Handle // nil: anything else panics the test
	name       string
}

func (h profileHandle) ProfileName() string                    { return h.name }
func (h profileHandle) SnapshotSharedLister() fwk.SharedLister { return nil }

// TestNodeNumberReadsSpecNodeName runs the SDK's NodeNumber example (C and
// C++ builds) on pods read back from a real kube-apiserver, through the
// shim's PreScore and Score against schedplug-host: the pod's spec.nodeName
// crosses the wire because NodeNumber declared it. kube-scheduler itself
// only schedules pods whose spec.nodeName is empty (for which NodeNumber,
// like the wasm original, scores every node 10), so the bound pod is given
// to the shim directly, as its PreScore would receive it.
func TestNodeNumberReadsSpecNodeName(t *testing.T) {
	dir := t.TempDir()
	cp, err := testenv.StartControlPlane(t, shared.etcd, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := "node-number"
	if err := testenv.CreateNamespace(ctx, cp.Client, ns); err != nil {
		t.Fatal(err)
	}
	names := []string{"node-1", "node-2", "node-3", "node-x"}
	for _, n := range names {
		if err := testenv.CreateNodes(ctx, cp.Client, testenv.MakeNode(n, bigNode, nil)); err != nil {
			t.Fatal(err)
		}
	}
	bound := testenv.MakePod(ns, testenv.PodSpec{Name: "bound", CPU: "100m"})
	bound.Spec.NodeName = "node-2"
	if err := testenv.CreatePods(ctx, cp.Client, bound, testenv.MakePod(ns, testenv.PodSpec{Name: "pending", CPU: "100m"})); err != nil {
		t.Fatal(err)
	}
	nodes := nodeInfos(ctx, t, cp.Client, names)
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"bound", "pending"} {
		p, err := cp.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods[name] = p
	}
	if pods["bound"].Spec.NodeName != "node-2" {
		t.Fatalf("the apiserver stored spec.nodeName %q for pod bound, want node-2", pods["bound"].Spec.NodeName)
	}

	hostBin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "node-number.yaml")
	if err := os.WriteFile(configFile, []byte(nodeNumberConfig()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, so := range []string{"node_number.so", "node_number_c.so"} {
		t.Run(so, func(t *testing.T) {
			pluginDir, err := testenv.PluginDirOf(t.TempDir(), so)
			if err != nil {
				t.Fatal(err)
			}
			sockDir, err := os.MkdirTemp("", "sp-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(sockDir)
			host := testenv.NewHost(hostBin, pluginDir, configFile, sockDir, filepath.Join(t.TempDir(), "host.log"))
			if err := host.StartAndWait(30 * time.Second); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if !host.Stop(10 * time.Second) {
					t.Errorf("schedplug-host did not exit within 10s of SIGTERM")
				}
				if t.Failed() {
					t.Logf("host log:\n%s", host.LogTail(40))
				}
			}()
			m, err := shim.NewManager(shim.Config{Target: host.Address, Profiles: []shim.Profile{
				{SchedulerName: "node-number", Plugins: []string{"NodeNumber"}},
				{SchedulerName: "node-number-reverse", Plugins: []string{"NodeNumber"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			plain := shim.NewPlugin(m, "NodeNumber", shim.DefaultPolicy(), profileHandle{name: "node-number"})
			reverse := shim.NewPlugin(m, "NodeNumber", shim.DefaultPolicy(), profileHandle{name: "node-number-reverse"})
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				plugin *shim.Plugin
				pod    string
				want   []int64 // node-1, node-2, node-3, node-x
			}{
				{plain, "bound", []int64{0, 10, 0, 0}},
				{reverse, "bound", []int64{10, 0, 10, 10}},
				// No spec.nodeName: every node matches, as in the original.
				{plain, "pending", []int64{10, 10, 10, 10}},
				{reverse, "pending", []int64{0, 0, 0, 0}},
			} {
				got := scoresOf(ctx, t, c.plugin, pods[c.pod], nodes)
				t.Logf("%s, pod %s (spec.nodeName %q): scores %v", c.plugin.Name(), c.pod, pods[c.pod].Spec.NodeName, got)
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("NodeNumber (%s) for pod %s: scores %v on %v, want %v", so, c.pod, got, names, c.want)
				}
			}
		})
	}
}

// nodeInfos reads the nodes back from the apiserver, as kube-scheduler's
// snapshot holds them.
func nodeInfos(ctx context.Context, t *testing.T, c kubernetes.Interface, names []string) []fwk.NodeInfo {
	t.Helper()
	var out []fwk.NodeInfo
	for _, n := range names {
		node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ni := framework.NewNodeInfo()
		ni.SetNode(node)
		out = append(out, ni)
	}
	return out
}

// scoresOf runs one scheduling cycle's PreScore and Score of the shim
// plugin for the pod.
func scoresOf(ctx context.Context, t *testing.T, p *shim.Plugin, pod *corev1.Pod, nodes []fwk.NodeInfo) []int64 {
	t.Helper()
	state := framework.NewCycleState()
	if st := p.PreScore(ctx, state, pod, nodes); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	var out []int64
	for _, ni := range nodes {
		score, st := p.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score on %s: %v", ni.Node().Name, st)
		}
		out = append(out, score)
	}
	return out
}
