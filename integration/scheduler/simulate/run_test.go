package simulate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Profiles of kube-scheduler's in-tree plugins only: no native plugin, so
// no schedplug-host is needed. The e2e tests run the native ones.
const inTreeConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
`

func node(name, cpu, extra string) string {
	return "---\napiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n" + extra +
		"status:\n  allocatable: {cpu: \"" + cpu + "\", memory: 8Gi, pods: \"110\"}\n"
}

func pod(name, cpu, spec string) string {
	return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n" + spec +
		"  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"}}}]\n"
}

func run(t *testing.T, nodes, pods string, explain ...string) *Result {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"config.yaml": inTreeConfig, "nodes.yaml": nodes, "pods.yaml": pods}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(context.Background(), Options{Config: filepath.Join(dir, "config.yaml"), Nodes: filepath.Join(dir, "nodes.yaml"),
		Pods: filepath.Join(dir, "pods.yaml"), Explain: explain, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func find(t *testing.T, r *Result, key string) PodResult {
	t.Helper()
	for _, p := range r.Pods {
		if p.Pod == key {
			return p
		}
	}
	t.Fatalf("no result for %s in %+v", key, r.Pods)
	return PodResult{}
}

// Resources and taints decide, with kube-scheduler's own message; a pod of
// another scheduler is skipped.
func TestRunGivesKubeSchedulersPlacementsAndReasons(t *testing.T) {
	r := run(t,
		node("big", "4", "")+node("small", "1", "")+node("tainted", "8", "spec:\n  taints: [{key: k, effect: NoSchedule}]\n"),
		pod("old", "2", "  nodeName: big\n")+pod("fits", "2", "")+pod("huge", "6", "")+
			pod("elsewhere", "1", "  schedulerName: other\n")+pod("gated", "1", "  schedulingGates: [{name: example.com/wait}]\n"),
		"default/huge")
	if p := find(t, r, "default/fits"); p.Status != Placed || p.Node != "big" || p.FeasibleNodes != 1 {
		t.Errorf("fits: %+v, want placed on big, the only feasible node", p)
	}
	huge := find(t, r, "default/huge")
	want := "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	if huge.Status != Unschedulable || huge.Reason != want {
		t.Errorf("huge: %s %q, want unschedulable %q", huge.Status, huge.Reason, want)
	}
	if huge.Explain == nil || len(huge.Explain.Nodes) != 3 || huge.Explain.Nodes[2].Plugin != "TaintToleration" ||
		huge.Explain.Nodes[0].Plugin != "NodeResourcesFit" || huge.Explain.Nodes[0].Reason != "Insufficient cpu" {
		t.Errorf("huge's explain: %+v", huge.Explain)
	}
	if p := find(t, r, "default/elsewhere"); p.Status != Skipped || !strings.Contains(p.Reason, `spec.schedulerName "other"`) {
		t.Errorf("elsewhere: %+v, want skipped", p)
	}
	if p := find(t, r, "default/gated"); p.Status != Unschedulable || !strings.Contains(p.Reason, "SchedulingGates plugin holds the pod back") {
		t.Errorf("gated: %+v, want unschedulable, never tried", p)
	}
	if len(r.Profiles) != 1 || len(r.Profiles[0].Filters) == 0 || r.KubeScheduler == "" {
		t.Errorf("profiles %+v, version %q", r.Profiles, r.KubeScheduler)
	}
}

// A higher-priority pod evicts a bound one, as kube-scheduler's
// DefaultPreemption does, and the eviction is reported.
func TestRunReportsPreemption(t *testing.T) {
	r := run(t, node("n1", "2", ""),
		pod("low", "2", "  nodeName: n1\n")+pod("high", "2", "  priority: 100\n"))
	if p := find(t, r, "default/high"); p.Status != Placed || p.Node != "n1" || p.Attempts < 2 {
		t.Errorf("high: %+v, want placed on n1 after a failed attempt", p)
	}
	if want := []Eviction{{Pod: "default/low", Node: "n1", By: "default/high"}}; !reflect.DeepEqual(r.Evicted, want) {
		t.Errorf("evicted %+v, want %+v", r.Evicted, want)
	}
}

// Equally scored nodes: every run takes the same one, reports the tie with
// the node taken first, and the pods after see its load.
func TestRunBreaksTiesTheSameWayEveryRun(t *testing.T) {
	nodes := node("a", "2", "") + node("b", "2", "") + node("c", "2", "")
	pods := pod("p1", "1", "") + pod("p2", "1", "") + pod("p3", "1", "")
	first := run(t, nodes, pods)
	for i, p := range first.Pods {
		if p.Status != Placed || !p.Scored || (len(p.Tie) > 0 && p.Tie[0] != p.Node) || (i == 0 && len(p.Tie) != 3) {
			t.Errorf("%+v: want placed, on the first node of its tie (the first pod: of all three)", p)
		}
	}
	if first.Pods[1].Node == first.Pods[0].Node {
		t.Errorf("p2 went to %s beside p1, where it scores less", first.Pods[1].Node)
	}
	if again := run(t, nodes, pods); !reflect.DeepEqual(first.Pods, again.Pods) {
		t.Errorf("two runs differ:\n%+v\n%+v", first.Pods, again.Pods)
	}
}

// A file kube-scheduler cannot use is an InputError naming it.
func TestRunRefusesBadFilesWithTheirNames(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	nodes := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(config, []byte(inTreeConfig+"    percentageOfNodesToScore: 300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nodes, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Options{Config: config, Nodes: nodes, Pods: nodes, Timeout: time.Minute})
	var input InputError
	if !errors.As(err, &input) || !strings.Contains(err.Error(), config+": kube-scheduler refuses it") {
		t.Errorf("bad percentageOfNodesToScore: %v", err)
	}
	if err := os.WriteFile(config, []byte(inTreeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Config: config, Nodes: nodes, Pods: nodes, Timeout: time.Minute})
	if !errors.As(err, &input) || !strings.Contains(err.Error(), `document 1 has kind "Pod"; give Node objects`) {
		t.Errorf("a Pod in the node dump: %v", err)
	}
}
