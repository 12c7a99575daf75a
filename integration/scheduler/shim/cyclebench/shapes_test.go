package cyclebench

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"schedplug.dev/integration/testbed/testenv"
	"schedplug.dev/integration/testbed/twin"
)

// shape is what a benchmark's cycles schedule, after one of the perf
// suite's workloads (integration/testbed/perf): the native plugins and the
// host's plugin directory, the nodes and the measured pods.
type shape struct {
	name      string
	natives   []string
	pluginDir func() (string, error)
	node      func(i, n int) *v1.Node
	// pod is the measured pod of that index.
	pod func(index int) *v1.Pod
	// filters: some pods do not fit some nodes (TestCycleVariantsAgree
	// checks that the plugins filter something).
	filters bool
}

// twinOf is each sample plugin's Go twin (testbed/twin).
var twinOf = map[string]string{"HwEncrypt": "GoHwEncrypt", "DedicatedNodes": "GoDedicatedNodes", "NetworkLatency": "GoNetworkLatency"}

var (
	// mixedShape is the Mixed workloads: the three sample plugins, a tenth of
	// the nodes dedicated, half of the others with hardware encryption, and
	// the pod-mixed template.
	mixedShape = shape{
		name:      "mixed",
		natives:   []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"},
		pluginDir: testenv.PluginDir,
		node:      makeNode,
		pod:       func(i int) *v1.Pod { return makePod(fmt.Sprintf("pod-mixed-%d", i), i) },
		filters:   true,
	}
	// noHintsShape is the NoHints workloads: DedicatedNodes built without
	// its hints (build/plugins/no-hints.d) and NetworkLatency, on
	// scheduler_perf's default nodes (no labels of the samples: every node
	// fits) and pods (pod-default, no annotations). Nothing lets a cycle
	// skip its call, and DedicatedNodes filters every node it is asked about.
	noHintsShape = shape{
		name:      "nohints",
		natives:   []string{"DedicatedNodes", "NetworkLatency"},
		pluginDir: testenv.NoHintsPluginDir,
		node:      makeDefaultNode,
		pod:       func(i int) *v1.Pod { return makePod(fmt.Sprintf("pod-default-%d", i), -1) },
	}
	// scoreOnlyShape is the ScoreOnly workloads: NetworkLatency alone (a
	// profile without a native Filter, whose one call is the PreScore sent
	// from PreFilter), on scheduler_perf's default nodes and pods.
	scoreOnlyShape = shape{
		name:      "scoreonly",
		natives:   []string{"NetworkLatency"},
		pluginDir: testenv.PluginDir,
		node:      makeDefaultNode,
		pod:       func(i int) *v1.Pod { return makePod(fmt.Sprintf("pod-default-%d", i), -1) },
	}
)

// newTwin is the Go twin plugin of a native one.
func newTwin(native string) frameworkruntime.PluginFactory {
	switch native {
	case "HwEncrypt":
		return twin.NewHwEncrypt(twinOf[native])
	case "DedicatedNodes":
		return twin.NewDedicatedNodes(twinOf[native])
	}
	return twin.NewNetworkLatency(twinOf[native])
}

// latencyText lists every seventh node with its own latency; the others
// get NetworkLatency's default.
func latencyText(nodes int) string {
	var s strings.Builder
	for i := 0; i < nodes; i += 7 {
		fmt.Fprintf(&s, "%s %d\n", nodeName(i), 1+i%90)
	}
	return s.String()
}

func nodeName(i int) string { return fmt.Sprintf("node-%05d", i) }

// makeNode is node i of n as the Mixed workloads create it: the last tenth
// dedicated (and with hardware encryption), the others with hardware
// encryption every other node; 4 cpu, 32Gi, 110 pods.
func makeNode(i, n int) *v1.Node {
	node := makeDefaultNode(i, n)
	if i >= n-n/10 {
		node.Labels[twin.DefaultDedicatedLabel] = "true"
		node.Labels[twin.DefaultHwLabel] = "true"
	} else {
		node.Labels[twin.DefaultHwLabel] = strconv.FormatBool(i%2 == 0)
	}
	return node
}

// makeDefaultNode is node i as scheduler_perf's default template makes it:
// 4 cpu, 32Gi, 110 pods, no labels but its hostname.
func makeDefaultNode(i, _ int) *v1.Node {
	labels := map[string]string{v1.LabelHostname: nodeName(i)}
	capacity := v1.ResourceList{
		v1.ResourcePods:   resource.MustParse("110"),
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), UID: types.UID("uid-" + nodeName(i)), Labels: labels},
		Status: v1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			Phase:      v1.NodeRunning,
		},
	}
}

// makePod is the perf suite's pod-mixed template for index (every third
// pod requires hardware encryption, every fifth may run on dedicated
// nodes); index < 0 is its pod-default (100m, 500Mi, no annotations).
func makePod(name string, index int) *v1.Pod {
	ann := map[string]string{}
	if index >= 0 {
		ann["perf.schedplug.io/index"] = strconv.Itoa(index)
		if index%3 == 0 {
			ann[twin.DefaultHwAnnotation] = "true"
		}
		if index%5 == 0 {
			ann[twin.DefaultDedicatedAnnotation] = "true"
		}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "measure", Name: name, UID: types.UID("uid-" + name), Annotations: ann},
		Spec: v1.PodSpec{
			SchedulerName: profileName,
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.2", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")},
			}}},
		},
	}
}
