package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// Hot reload under load: 1000 replicas are scheduled continuously while
// the Reloadable plugin's file is replaced 11 times, first through a
// ConfigMap volume's ..data symlink swap, then by renaming files over it:
// good versions (v1 and v2, which reject different nodes), a broken file,
// a version that refuses its args and one that declares other events.
// No scheduling cycle may fail, no pod may land on a node the version live
// during its whole cycle rejects (the shim reuses verdicts for replicas, so
// this also checks that kept verdicts die with a swap), and the host's
// metrics must count each swap and each refusal.

// reloadStep is one replacement of reloadable.so and what the host must
// make of it.
type reloadStep struct {
	file      string // reloadable_vN.so, or "" for a broken file
	configMap bool   // through the ..data swap, else renamed over the file
	version   int    // the version serving afterwards
	refusal   string // the refusal's reason; "" when the version is taken
}

var reloadSteps = []reloadStep{
	{file: "reloadable_v2.so", configMap: true, version: 2},
	{configMap: true, version: 2, refusal: "load"},
	{file: "reloadable_v1.so", configMap: true, version: 1},
	{file: "reloadable_v3.so", configMap: true, version: 1, refusal: "create"},
	{file: "reloadable_v2.so", version: 2},
	{file: "reloadable_v4.so", version: 2, refusal: "restart_needed"},
	{file: "reloadable_v1.so", version: 1},
	{file: "reloadable_v2.so", version: 2},
	{version: 2, refusal: "load"},
	{file: "reloadable_v1.so", version: 1},
	{file: "reloadable_v2.so", version: 2},
}

// epoch is a span of time during which one version was sure to serve: from
// when the host reported it to when the next replacement began.
type epoch struct {
	version    int
	start, end time.Time
}

func TestHotReloadUnderLoad(t *testing.T) {
	versions, err := testenv.ReloadablePluginDir()
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(t.TempDir(), "plugins")
	dated := 0
	// configMapSwap lays out `file` as kubelet updates a ConfigMap volume:
	// a new dated directory, then ..data renamed to point at it.
	configMapSwap := func(file string) {
		dated++
		dir := fmt.Sprintf("..2026_12_04_%02d", dated)
		mustDo(t, os.MkdirAll(filepath.Join(plugins, dir), 0o755))
		mustDo(t, os.WriteFile(filepath.Join(plugins, dir, "reloadable.so"), reloadableBytes(t, versions, file), 0o644))
		mustDo(t, os.Symlink(dir, filepath.Join(plugins, "..data_tmp")))
		mustDo(t, os.Rename(filepath.Join(plugins, "..data_tmp"), filepath.Join(plugins, "..data")))
	}
	mustDo(t, os.MkdirAll(plugins, 0o755))
	configMapSwap("reloadable_v1.so")
	mustDo(t, os.Symlink("..data/reloadable.so", filepath.Join(plugins, "reloadable.so")))
	replace := func(file string) {
		tmp := filepath.Join(plugins, ".reloadable.so.tmp")
		mustDo(t, os.WriteFile(tmp, reloadableBytes(t, versions, file), 0o644))
		mustDo(t, os.Rename(tmp, filepath.Join(plugins, "reloadable.so")))
	}

	s := startStackWith(t, stackOptions{
		Plugins:     []testenv.NativePlugin{{Name: "Reloadable", FailurePolicy: "Fail"}},
		PluginDir:   plugins,
		HostMetrics: true,
		ClientQPS:   200,
	})
	ctx := s.ctx()
	ns := s.namespace("hot-reload")

	// Every version rejects always-*; v1 rejects v1-*, v2 rejects v2-*.
	nodeLabels := map[string]string{}
	var nodes []*corev1.Node
	for _, n := range []struct{ name, label string }{
		{"always-1", "reload/reject-always"}, {"always-2", "reload/reject-always"},
		{"v1-1", "reload/reject-v1"}, {"v1-2", "reload/reject-v1"}, {"v1-3", "reload/reject-v1"},
		{"v2-1", "reload/reject-v2"}, {"v2-2", "reload/reject-v2"}, {"v2-3", "reload/reject-v2"},
		{"plain-1", ""}, {"plain-2", ""}, {"plain-3", ""},
	} {
		labels := map[string]string{}
		if n.label != "" {
			labels[n.label] = "yes"
		}
		nodeLabels[n.name] = n.label
		nodes = append(nodes, testenv.MakeNode(n.name, testenv.NodeResources{CPU: "64", Memory: "256Gi", Pods: 1000}, labels))
	}
	s.createNodes(ctx, nodes...)

	// When each pod was created and first seen bound.
	var mu sync.Mutex
	created := map[string]time.Time{}
	bound := map[string]time.Time{}
	watcher := s.watchPods(ns)
	go func() {
		for ev := range watcher.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
				mu.Lock()
				if _, seen := bound[pod.Name]; !seen {
					bound[pod.Name] = time.Now()
				}
				mu.Unlock()
			}
		}
	}()

	// 1000 replicas at a steady pace while the steps run.
	const total = 1000
	createDone := make(chan error, 1)
	go func() {
		for i := 0; i < total; i++ {
			name := fmt.Sprintf("replica-%04d", i)
			mu.Lock()
			created[name] = time.Now()
			mu.Unlock()
			if err := testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, testenv.PodSpec{Name: name, CPU: "10m"})); err != nil {
				createDone <- err
				return
			}
			time.Sleep(30 * time.Millisecond)
		}
		createDone <- nil
	}()

	hostMetric := func(name string) float64 {
		text, err := s.host.Metrics()
		s.must(err)
		v, _ := testenv.MetricSum(text, name)
		return v
	}
	waitMetric := func(name string, want float64, what string) time.Time {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if v := hostMetric(name); v >= want {
				if v > want {
					t.Errorf("%s: %s is %v, want %v", what, name, v, want)
				}
				return time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s did not reach %v within 30s (host log:\n%s)", what, name, want, s.host.LogTail(20))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	epochs := []epoch{{version: 1, start: time.Now()}}
	swaps, refused := 0.0, map[string]float64{}
	time.Sleep(2 * time.Second)
	for i, step := range reloadSteps {
		began := time.Now()
		epochs[len(epochs)-1].end = began
		what := fmt.Sprintf("step %d (%s)", i+1, stepName(step))
		if step.configMap {
			configMapSwap(step.file)
		} else {
			replace(step.file)
		}
		if step.refusal == "" {
			swaps++
			at := waitMetric("schedplug_reloads_total", swaps, what)
			t.Logf("%s: swapped in %s after the file changed", what, at.Sub(began).Round(time.Millisecond))
			epochs = append(epochs, epoch{version: step.version, start: at})
		} else {
			refused[step.refusal]++
			series := fmt.Sprintf(`schedplug_reloads_refused_total{file="reloadable.so",reason="%s"}`, step.refusal)
			at := waitMetric(series, refused[step.refusal], what)
			t.Logf("%s: refused (%s) %s after the file changed", what, step.refusal, at.Sub(began).Round(time.Millisecond))
			epochs = append(epochs, epoch{version: step.version, start: at})
		}
		time.Sleep(2500 * time.Millisecond)
	}
	epochs[len(epochs)-1].end = time.Now().Add(time.Hour)
	s.must(<-createDone)

	names := make([]string, 0, total)
	for i := 0; i < total; i++ {
		names = append(names, fmt.Sprintf("replica-%04d", i))
	}
	placed, err := testenv.WaitForBound(ctx, s.client, ns, names, 2*time.Minute)
	if err != nil {
		t.Fatalf("not every replica was bound: %v", err)
	}

	// Every placement obeys every version's rule; a pod whose cycle lay
	// wholly inside one epoch obeys that version's own rule.
	mu.Lock()
	defer mu.Unlock()
	checked := map[int]int{}
	for _, name := range names {
		node := placed[name]
		label := nodeLabels[node]
		if label == "reload/reject-always" {
			t.Errorf("%s was bound to %s, which every version rejects", name, node)
			continue
		}
		c, b := created[name], bound[name]
		if b.IsZero() {
			continue // bound before the watch saw it (cannot be: it started first)
		}
		for _, e := range epochs {
			if !c.Before(e.start) && b.Before(e.end) {
				checked[e.version]++
				if label == fmt.Sprintf("reload/reject-v%d", e.version) {
					t.Errorf("%s was bound to %s while Reloadable v%d was live for its whole cycle (created %s, bound %s), and v%d rejects that node",
						name, node, e.version, c.Format(time.StampMilli), b.Format(time.StampMilli), e.version)
				}
			}
		}
	}
	t.Logf("pods whose whole cycle fell within one version's time: v1 %d, v2 %d", checked[1], checked[2])
	if checked[1] < 100 || checked[2] < 100 {
		t.Errorf("too few pods fell wholly within one version's time (v1 %d, v2 %d) for the check to mean much", checked[1], checked[2])
	}

	// No scheduling cycle failed: kube-scheduler counted every attempt as
	// scheduled, and the shim never applied a failure policy.
	text, err := s.scheduler.Metrics()
	s.must(err)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "scheduler_schedule_attempts_total{") && !strings.Contains(line, `result="scheduled"`) {
			if v := strings.Fields(line); len(v) == 2 && v[1] != "0" {
				t.Errorf("kube-scheduler counted attempts that did not schedule: %s", line)
			}
		}
	}
	if v, _ := testenv.MetricSum(text, "schedplug_shim_failure_policy_applied_total"); v != 0 {
		t.Errorf("the shim applied a failure policy %v times", v)
	}
	reused, _ := testenv.MetricSum(text, "schedplug_shim_verdict_reuse_cycles_total")
	if reused == 0 {
		t.Errorf("the shim reused no verdicts: the test did not exercise kept verdicts across swaps")
	}
	t.Logf("%d replicas bound, %v cycles answered from kept verdicts", total, reused)

	// The host's metrics count each swap and each refusal, once.
	if v := hostMetric("schedplug_reloads_total"); v != swaps {
		t.Errorf("schedplug_reloads_total is %v, want %v", v, swaps)
	}
	for reason, want := range refused {
		series := fmt.Sprintf(`schedplug_reloads_refused_total{file="reloadable.so",reason="%s"}`, reason)
		if v := hostMetric(series); v != want {
			t.Errorf("%s is %v, want %v", series, v, want)
		}
	}
	if v := hostMetric("schedplug_plugin_set_generation"); v != swaps+1 {
		t.Errorf("schedplug_plugin_set_generation is %v, want %v", v, swaps+1)
	}
}

func stepName(s reloadStep) string {
	file := s.file
	if file == "" {
		file = "a broken file"
	}
	how := "renamed over reloadable.so"
	if s.configMap {
		how = "..data swap"
	}
	return file + ", " + how
}

// reloadableBytes is the content of a version's file, or of a broken one.
func reloadableBytes(t *testing.T, dir, file string) []byte {
	t.Helper()
	if file == "" {
		return []byte("this is not a shared object\n")
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatalf("%v (build it with cmake --build build)", err)
	}
	return data
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
