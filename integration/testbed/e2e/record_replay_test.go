package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// Record and replay on a real cluster: schedplug-host runs with --record
// while kube-scheduler places 1000 pods through Reloadable (v1 with its
// Score), one pod in seven labelled reload/picky=yes. Then the commands
// of docs/record-replay.md replay the recording: with the same build no
// pod may differ; with v2 (which rejects every node for picky pods and
// scores the other way round for them) exactly the picky pods change, in
// feasible set and best node.
//
// Verdict reuse is off in the scheduler so that every cycle calls the
// host (a cycle answered from kept verdicts makes no call, so the host
// has nothing to record); the count of expected differences is then
// exact.

const (
	recordPods     = 1000
	recordNodes    = 10
	recordPickyMod = 7
)

// The paths docs/record-replay.md's replay commands use, and what the
// test puts in their place.
const (
	docRecordDir  = "/var/lib/schedplug/record"
	docLivePlugin = "/etc/schedplug/plugins"
	docNewPlugins = "new-plugins.d"
)

// replayReport is what `schedplug replay --json` prints (the keys the
// test reads).
type replayReport struct {
	Files   int  `json:"files"`
	Cycles  int  `json:"cycles"`
	Pods    int  `json:"pods"`
	Calls   int  `json:"calls"`
	Differs bool `json:"differs"`
	Skipped struct {
		RecordedFailures int `json:"recorded_failures"`
		UnknownSession   int `json:"unknown_session"`
		RecordingGaps    int `json:"recording_gaps"`
	} `json:"skipped"`
	Changed struct {
		FeasibleSetPods int `json:"feasible_set_pods"`
		BestNodePods    int `json:"best_node_pods"`
		NewErrorPods    int `json:"new_error_pods"`
		ReasonPods      int `json:"reason_pods"`
		HookPods        int `json:"hook_pods"`
	} `json:"changed"`
	Examples []struct {
		Kind   string `json:"kind"`
		Pod    string `json:"pod"`
		Detail string `json:"detail"`
	} `json:"examples"`
}

func TestRecordAndReplay(t *testing.T) {
	versions, err := testenv.ReloadablePluginDir()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	live := filepath.Join(work, "live")
	changed := filepath.Join(work, "changed")
	record := filepath.Join(work, "record")
	for dir, file := range map[string]string{live: "reloadable_v5.so", changed: "reloadable_v6.so"} {
		mustDo(t, os.MkdirAll(dir, 0o755))
		mustDo(t, os.WriteFile(filepath.Join(dir, "reloadable.so"), reloadableBytes(t, versions, file), 0o644))
	}
	mustDo(t, os.MkdirAll(record, 0o755))

	s := startStackWith(t, stackOptions{
		Plugins:      []testenv.NativePlugin{{Name: "Reloadable", FailurePolicy: "Fail"}},
		PluginDir:    live,
		HostArgs:     []string{"--record", record},
		HostMetrics:  true,
		ClientQPS:    500,
		SchedulerEnv: []string{"SCHEDPLUG_VERDICT_REUSE=off"},
	})
	ctx := s.ctx()
	ns := s.namespace("record")
	var nodes []*corev1.Node
	for i := 0; i < recordNodes; i++ {
		nodes = append(nodes, testenv.MakeNode(fmt.Sprintf("node-%d", i),
			testenv.NodeResources{CPU: "64", Memory: "256Gi", Pods: 1000}, nil))
	}
	s.createNodes(ctx, nodes...)
	names := make([]string, 0, recordPods)
	picky := 0
	for i := 0; i < recordPods; i++ {
		spec := testenv.PodSpec{Name: fmt.Sprintf("pod-%04d", i), CPU: "10m"}
		if i%recordPickyMod == 3 {
			spec.Labels = map[string]string{"reload/picky": "yes"}
			picky++
		}
		s.must(testenv.CreatePods(ctx, s.client, testenv.MakePod(ns, spec)))
		names = append(names, spec.Name)
	}
	if _, err := testenv.WaitForBound(ctx, s.client, ns, names, 3*time.Minute); err != nil {
		t.Fatalf("not every pod was bound: %v", err)
	}
	// The metrics follow the files, which the writer flushes every second.
	var recorded, dropped, bytes float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		metrics, err := s.host.Metrics()
		s.must(err)
		recorded, _ = testenv.MetricSum(metrics, "schedplug_record_calls_total")
		dropped, _ = testenv.MetricSum(metrics, "schedplug_record_dropped_calls_total")
		bytes, _ = testenv.MetricSum(metrics, "schedplug_record_bytes_total")
		if recorded+dropped >= recordPods || time.Now().After(deadline) {
			break
		}
	}
	// The host writes what it queued when it stops.
	if !s.host.Stop(10 * time.Second) {
		t.Fatal("schedplug-host did not stop within 10s")
	}
	if dropped != 0 {
		t.Errorf("the recorder left out %v calls", dropped)
	}
	if recorded < recordPods {
		t.Errorf("the host recorded %v calls, want at least %d (a PreFilter with its scores ahead per pod)", recorded, recordPods)
	}
	t.Logf("recorded %v calls, %v compressed bytes (%.0f bytes per pod) before the host stopped", recorded, bytes, bytes/recordPods)

	commands, docOutput := docReplay(t)
	texts := map[string]string{} // the text report, by plugin directory
	replay := func(command string, plugins string) (replayReport, int) {
		t.Helper()
		cli, err := testenv.CLIBinary()
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Fields(command)[1:] // after "schedplug"
		for i, a := range args {
			switch a {
			case docRecordDir:
				args[i] = record
			case docLivePlugin, docNewPlugins:
				args[i] = plugins
			}
		}
		text, err := exec.CommandContext(ctx, cli, args...).Output()
		if err != nil && !errors.As(err, new(*exec.ExitError)) {
			t.Fatal(err)
		}
		texts[plugins] = string(text)
		args = append(args, "--json")
		out, err := exec.CommandContext(ctx, cli, args...).Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
			t.Logf("schedplug %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, exit.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		var r replayReport
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("schedplug %s printed no report (%v):\n%s", strings.Join(args, " "), err, out)
		}
		return r, code
	}

	same, code := replay(commands[docLivePlugin], live)
	if code != 0 || same.Differs {
		t.Errorf("replay with the recorded build: exit %d, differs %v, changes %+v, examples %+v; want exit 0 and no difference",
			code, same.Differs, same.Changed, same.Examples)
	}
	if same.Pods != recordPods || same.Cycles < recordPods {
		t.Errorf("replay saw %d pods in %d cycles, want %d pods and at least as many cycles", same.Pods, same.Cycles, recordPods)
	}
	if same.Skipped.UnknownSession+same.Skipped.RecordingGaps != 0 || same.Changed.ReasonPods != 0 {
		t.Errorf("replay with the recorded build: skipped %+v, reason changes %d; want none", same.Skipped, same.Changed.ReasonPods)
	}

	diff, code := replay(commands[docNewPlugins], changed)
	if code != 1 || !diff.Differs {
		t.Errorf("replay with v2: exit %d, differs %v; want exit 1", code, diff.Differs)
	}
	if diff.Changed.FeasibleSetPods != picky || diff.Changed.BestNodePods != picky || diff.Changed.NewErrorPods != 0 {
		t.Errorf("replay with v2 changed %+v; want the %d picky pods in feasible set and best node, no errors", diff.Changed, picky)
	}
	for _, e := range diff.Examples {
		var i int
		if _, err := fmt.Sscanf(e.Pod, ns+"/pod-%04d", &i); err != nil || i%recordPickyMod != 3 {
			t.Errorf("replay with v2 names %s (%s: %s), which is not a picky pod", e.Pod, e.Kind, e.Detail)
		}
	}
	t.Logf("replay: %d files, %d cycles, %d calls; with v2: %+v\n%s", same.Files, same.Cycles, same.Calls, diff.Changed, texts[changed])
	// The guide's sample report: its counts are this test's.
	for _, line := range strings.Split(docOutput, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "pods ") && !strings.Contains(texts[changed], line) {
			t.Errorf("docs/record-replay.md's sample report says %q; the replay printed:\n%s", line, texts[changed])
		}
	}
}

// docReplay returns the `schedplug replay` commands of
// docs/record-replay.md, by the plugin directory they name (the test runs
// the commands the admin guide shows), and the guide's sample report (the
// text block after them).
func docReplay(t *testing.T) (map[string]string, string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "record-replay.md"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	var report []string
	inReport := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case inReport && strings.HasPrefix(line, "```"):
			inReport = false
		case inReport:
			report = append(report, line)
		case line == "```text" && len(found) == 2 && report == nil:
			inReport = true
		case strings.HasPrefix(line, "schedplug replay "):
			for _, dir := range []string{docLivePlugin, docNewPlugins} {
				if strings.HasSuffix(line, " "+dir) && strings.Contains(line, docRecordDir) {
					found[dir] = line
				}
			}
		}
	}
	for _, dir := range []string{docLivePlugin, docNewPlugins} {
		if found[dir] == "" {
			t.Fatalf("docs/record-replay.md shows no `schedplug replay --record %s --plugins %s` command any more; the test runs the guide's commands", docRecordDir, dir)
		}
	}
	if report == nil {
		t.Fatal("docs/record-replay.md has no sample report (a text block) after its replay commands")
	}
	return found, strings.Join(report, "\n")
}
