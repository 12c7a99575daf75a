package perf

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"schedplug.dev/integration/testbed/testenv"
)

// TestSchedulerPerfShort runs the short suite (every workload in small
// sizes, every variant, once) so that the suite cannot rot: it re-runs
// this test binary as the benchmark and checks that every run scheduled
// every measured pod and produced its figures. It asserts nothing about
// speed.
func TestSchedulerPerfShort(t *testing.T) {
	if os.Getenv(EnvSize) == "full" {
		t.Fatalf("%s=full is for the benchmark: run go test -run '^$' -bench BenchmarkSchedplugPerf (docs/performance.md)", EnvSize)
	}
	// Fail early, with the build hint, when the host or plugins are missing.
	if _, err := testenv.HostBinary(); err != nil {
		t.Fatal(err)
	}
	for _, b := range []pluginBuild{sampleBuild, shapeFitBuild, noHintsBuild, deviceShareBuild} {
		if _, err := pluginBuildDir(b); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	env := append(os.Environ(), EnvSize+"=short", EnvOut+"="+out)
	if os.Getenv(EnvEtcd) == "" {
		etcd, err := buildEtcd(filepath.Join(t.TempDir(), "etcd"))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, EnvEtcd+"="+etcd)
	}
	// The child fails on its own (with its logs) before go test's
	// deadline for this test would kill the parent, and dies with it.
	timeout := 30 * time.Minute
	if d, ok := t.Deadline(); ok {
		timeout = time.Until(d) - 30*time.Second
		if timeout < time.Minute {
			t.Fatalf("go test's -timeout leaves %v for the short scheduler_perf suite; give it at least 10m (it takes a few minutes on a loaded machine)", time.Until(d))
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkSchedplugPerf$", "-test.benchtime=1x", "-test.timeout="+timeout.String())
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	output, err := cmd.CombinedOutput()
	logFile := filepath.Join(out, "bench.log")
	_ = os.WriteFile(logFile, output, 0o644)
	if err != nil {
		// The run's logs (scheduler, host, etcd per run) live in a temporary
		// directory: keep them where CI and a developer can read them.
		where := "not kept (no repository root)"
		if root, rerr := testenv.RepoRoot(); rerr == nil {
			kept := filepath.Join(root, "build", "perf-short-failed")
			_ = os.RemoveAll(kept)
			where = "kept in " + kept
			if cerr := os.CopyFS(kept, os.DirFS(out)); cerr != nil {
				where = fmt.Sprintf("not kept (%v)", cerr)
			}
		}
		t.Fatalf("the short scheduler_perf suite failed (%v); its logs are %s; its output ends with:\n%s", err, where, tail(string(output), 80))
	}
	data, err := os.ReadFile(filepath.Join(out, resultsFile))
	if err != nil {
		t.Fatalf("the short suite wrote no %s: %v; its output ends with:\n%s", resultsFile, err, tail(string(output), 40))
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("reading %s: %v", resultsFile, err)
	}
	o, err := optionsFromEnv("")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Final {
		t.Errorf("%s is not marked final: the suite stopped before its report", resultsFile)
	}
	want := 0
	for _, sh := range o.Shapes {
		for _, v := range allVariants {
			if runsVariant(sh, v) {
				want++
			}
		}
	}
	if len(rep.Runs) != want {
		t.Fatalf("%d runs in %s, want %d (every workload x every variant it runs in)", len(rep.Runs), resultsFile, want)
	}
	for _, r := range rep.Runs {
		if !r.Complete || r.BoundPods != r.MeasuredPods {
			t.Errorf("%s: %d of %d measured pods bound (complete %v)", r.ID, r.BoundPods, r.MeasuredPods, r.Complete)
			continue
		}
		if r.WindowPodsPerSecond <= 0 || r.ProcCPUMsPerPod <= 0 {
			t.Errorf("%s: no throughput or CPU figure: %+v", r.ID, r)
		}
		// kube-scheduler's own histograms, read back from scheduler_perf's
		// data items: every variant runs PreFilter and Filter per pod.
		if r.CycleMs["PreFilter"] <= 0 || r.CycleMs["Filter"] <= 0 {
			t.Errorf("%s: no scheduling-cycle durations: %v", r.ID, r.CycleMs)
		}
		// Upstream's batching scenario keeps kube-scheduler's opportunistic
		// batching on with the default plugins, with the signing Go twins,
		// and with the native plugins, which sign through the shim.
		if sh, ok := shapeNamed(o.Shapes, r.Shape); ok && isBatching(sh) && r.Variant != VariantExtender && r.BatchAttempts["hint_used"] < 1 {
			t.Errorf("%s: kube-scheduler's batching gave no hint it used (batch attempts %v): a plugin of the profile did not sign the pods", r.ID, r.BatchAttempts)
		}
		sh, _ := shapeNamed(o.Shapes, r.Shape)
		if isScoreOnly(sh) && isNative(r.Variant) {
			// A profile without native Filter plugins makes one call per
			// pod: PreScore, with the node-table delta, sent from
			// PreFilter for scores ahead (at 20 nodes every node is scored
			// ahead, so none is asked again).
			if pf, ps := r.RPCsPerPodByMethod["PreFilter"], r.RPCsPerPodByMethod["PreScore"]; pf != 0 || !aboutOnePerPod(ps, r.MeasuredPods) || r.HostPeakRSSMB <= 0 {
				t.Errorf("%s: score-only native run with %.3f PreFilter and %.3f PreScore calls per pod, want 0 and 1 (or no host memory figure): %+v", r.ID, pf, ps, r)
			}
		} else if isNative(r.Variant) {
			// Every measured pod goes through at least one PreFilter: a call,
			// or a cycle answered from verdicts kept for identical replicas.
			calls := r.RPCsPerPodByMethod["PreFilter"]
			if perPod := calls + r.VerdictReuse["cycles"] - r.VerdictReuse["misses"]; (perPod < 1 && !aboutOnePerPod(perPod, r.MeasuredPods)) || r.HostPeakRSSMB <= 0 {
				t.Errorf("%s: native run with fewer PreFilter calls and reusing cycles than pods, or no host memory figure: %+v", r.ID, r)
			}
			if calls > 0 && (r.RPCWallMs["PreFilter"] <= 0 || r.BytesSentPerPod <= 0 || r.BytesRecvPerPod <= 0) {
				t.Errorf("%s: native run without the PreFilter round-trip time or byte figures: %v, %+v", r.ID, r.RPCWallMs, r)
			}
			// A profile with native filters and a native Score gets its
			// scores with PreFilter's answer (scores ahead): one call per
			// pod in the scheduling cycle's filtering and scoring, none of
			// them PreScore (no window at 20 nodes, no custom normalizer
			// among the samples).
			if cycleCalls := r.RPCsPerPod - hookCallsPerPod(r); hasScorePlugin(sh) && (r.RPCsPerPodByMethod["PreScore"] != 0 || cycleCalls > 1.001) {
				t.Errorf("%s: native Filter+Score run with %.3f host calls per pod for filtering and scoring (%v), want 1 and no PreScore", r.ID, cycleCalls, r.RPCsPerPodByMethod)
			}
		}
		if ownsDevices(sh) {
			checkDeviceRun(t, r)
		}
	}
	// CPU per pod, scheduler process and host, and its ratio to the twin's:
	// printed, and only checked present (every run has process CPU).
	twinRan := map[string]bool{}
	for _, s := range rep.Summary {
		twinRan[s.Shape] = twinRan[s.Shape] || s.Variant == VariantTwin
	}
	for _, s := range rep.Summary {
		if s.CPUMsPerPod <= 0 || (s.Variant != VariantTwin && twinRan[s.Shape] && s.CPUVsTwin <= 0) {
			t.Errorf("%s/%s: no CPU per pod or no ratio to the twin's: %+v", s.Shape, s.Variant, s)
		}
	}
	if i := strings.Index(string(output), "\nschedplug scheduler_perf,"); i >= 0 {
		t.Logf("%s", output[i:])
	}
}

// checkDeviceRun: every measured pod of a devices run is bound with its
// devices written, none shared on a node; a native run calls Reserve and
// PreBind once per pod (with their round-trip times) and Unreserve never,
// nothing failing, Reserve over the fast path (it runs in the scheduling
// cycle) and PreBind over gRPC (on the binding goroutines).
func checkDeviceRun(t *testing.T, r result) {
	t.Helper()
	if r.Devices == nil || r.Devices.Assigned != r.MeasuredPods || len(r.Devices.Problems) > 0 {
		t.Errorf("%s: devices assigned to the measured pods: %+v, want all %d pods right", r.ID, r.Devices, r.MeasuredPods)
	}
	if !isNative(r.Variant) {
		return
	}
	m := r.RPCsPerPodByMethod
	if !aboutOnePerPod(m["Reserve"], r.MeasuredPods) || !aboutOnePerPod(m["PreBind"], r.MeasuredPods) || m["Unreserve"] != 0 {
		t.Errorf("%s: %.3f Reserve, %.3f PreBind and %.3f Unreserve calls per pod, want 1, 1 and 0: %v", r.ID, m["Reserve"], m["PreBind"], m["Unreserve"], m)
	}
	if r.RPCWallMs["Reserve"] <= 0 || r.RPCWallMs["PreBind"] <= 0 {
		t.Errorf("%s: no round-trip time of Reserve or PreBind: %v", r.ID, r.RPCWallMs)
	}
	if fast := r.FastPathCallsPerPodByMethod; r.Variant != VariantNativeGRPC && (!aboutOnePerPod(fast["Reserve"], r.MeasuredPods) || fast["PreBind"] != 0) {
		t.Errorf("%s: %.3f Reserve and %.3f PreBind calls per pod over the fast path, want 1 and 0: %v", r.ID, fast["Reserve"], fast["PreBind"], fast)
	}
}

// hookMethods are the host's calls outside filtering and scoring: a
// profile's reservation and binding hooks, and admission.
var hookMethods = []string{"Reserve", "Unreserve", "Permit", "PreBind", "PreEnqueue"}

// hookCallsPerPod is a run's calls per pod outside filtering and scoring:
// the reservation and binding hooks, and admission.
func hookCallsPerPod(r result) float64 {
	var n float64
	for _, m := range hookMethods {
		n += r.RPCsPerPodByMethod[m]
	}
	return n
}

func shapeNamed(shs []shape, name string) (shape, bool) {
	for _, sh := range shs {
		if sh.Name == name {
			return sh, true
		}
	}
	return shape{}, false
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// aboutOnePerPod says whether perPod calls per measured pod are one per
// pod, give or take the call of one pod: the window opens when the suite's
// watch sees the measured namespace, which on a loaded machine can arrive
// after the first measured pod's cycle made its call.
func aboutOnePerPod(perPod float64, pods int) bool {
	return math.Abs(perPod*float64(pods)-float64(pods)) <= 1.001
}
