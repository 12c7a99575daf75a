// Package perf is schedplug's scheduler_perf suite: upstream's
// k8s.io/kubernetes/test/integration/scheduler_perf runs each workload
// against a real etcd and kube-apiserver with the scheduler in this
// process, once per variant (default plugins, the sample plugins as Go
// twins, the same plugins native through the shim and schedplug-host),
// interleaved and repeated; the suite prints medians and ratios and writes
// them as JSON (docs/performance.md).
//
// `go test ./testbed/perf/` runs the short suite (TestSchedulerPerfShort); the
// full one is
//
//	SCHEDPLUG_PERF=full go test -run '^$' -bench BenchmarkSchedplugPerf -benchtime 1x -timeout 0 ./testbed/perf/
//
// or `bash tools/dev/perf.sh`, which also builds what it needs.
//
// One file: the runner's steps (set-up, one run per workload and variant,
// watching the pods, reading scheduler_perf's data items, the results) all
// work on the suite's state; the workloads and variants are in plan_test.go.
package perf

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	_ "k8s.io/component-base/logs/json/register"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"

	"schedplug.dev/integration/scheduler/shim"
	"schedplug.dev/integration/scheduler/shim/simannot"
	"schedplug.dev/integration/testbed/testenv"
	"schedplug.dev/integration/testbed/twin"
)

func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// suite is the state of one BenchmarkSchedplugPerf process.
type suite struct {
	opts    options
	runs    []*run
	byID    map[string]*runState
	configs map[string]string
	cfgFile string
	started time.Time
	load0   string
	hostBin string
	// buildDirs: the plugin directory of each build the workloads load
	// (pluginBuild).
	buildDirs map[pluginBuild]string
	logDir    string

	mu  sync.Mutex
	mgr *shim.Manager // the native run's manager, nil otherwise
}

// runState is what one run measured.
type runState struct {
	*run
	wire      *wireStats
	host      *testenv.Host
	hostPid   int
	start     *snapshot // first measured pod seen
	end       *snapshot // last measured pod bound
	bound     int
	hostHWMKB int64
	// devices is what the measured pods of a devices workload carry at
	// the end (nil for the other workloads).
	devices   *deviceCheck
	watchDone chan struct{}
}

// BenchmarkSchedplugPerf runs the suite (short unless SCHEDPLUG_PERF=full)
// through upstream's RunBenchmarkPerfScheduling.
func BenchmarkSchedplugPerf(b *testing.B) {
	root, err := testenv.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	o, err := optionsFromEnv(root)
	if err != nil {
		b.Fatal(err)
	}
	s := &suite{opts: o, byID: map[string]*runState{}}
	if err := s.setup(b); err != nil {
		b.Fatal(err)
	}
	started := time.Now()
	s.started = started
	load0 := loadAvg()
	s.load0 = load0
	fmt.Printf("schedplug perf (%s): %d runs (%d workloads x %d variants x %d repetitions), load average %s\n",
		o.SizeLabel, len(s.runs), len(o.Shapes), len(o.Variants), o.Reps, load0)

	timeout := 10 * time.Minute
	if !o.Full {
		timeout = 3 * time.Minute
	}
	registry := frameworkruntime.Registry{
		twinOf["HwEncrypt"]:      twin.NewHwEncrypt(twinOf["HwEncrypt"]),
		twinOf["DedicatedNodes"]: twin.NewDedicatedNodes(twinOf["DedicatedNodes"]),
		twinOf["NetworkLatency"]: twin.NewNetworkLatency(twinOf["NetworkLatency"]),
		twinOf["ShapeFit"]:       twin.NewShapeFit(twinOf["ShapeFit"]),
		twinOf["DeviceShare"]:    twin.NewDeviceSharePacking(twinOf["DeviceShare"]),
	}
	for _, n := range slices.Concat(allPlugins, computePlugins, devicePlugins) {
		registry[n] = shim.FactoryFor(s.manager, n)
	}
	perf.RunBenchmarkPerfScheduling(b, s.cfgFile, "schedplug", registry,
		perf.WithPreRunFn(s.preRun), perf.WithPrepareFn(s.prepare), perf.WithPodsSchedulingTimeout(timeout))

	rep := s.report(started, load0, loadAvg(), true)
	if err := rep.write(o.OutDir); err != nil {
		b.Error(err)
	}
	fmt.Print(rep.table())
	fmt.Printf("results: %s\n", filepath.Join(o.OutDir, resultsFile))
}

// writeProgress rewrites results.json after every run, so that an
// interrupted full run keeps what it measured (scheduler_perf's own
// throughput figures arrive only at the end).
func (s *suite) writeProgress() {
	rep := s.report(s.started, s.load0, loadAvg(), false)
	if err := rep.write(s.opts.OutDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

func (s *suite) setup(b *testing.B) error {
	o := s.opts
	var err error
	if s.hostBin, err = testenv.HostBinary(); err != nil {
		return err
	}
	s.buildDirs = map[pluginBuild]string{}
	for _, sh := range o.Shapes {
		if _, ok := s.buildDirs[sh.build]; ok {
			continue
		}
		if s.buildDirs[sh.build], err = pluginBuildDir(sh.build); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return fmt.Errorf("creating the output directory %s (%s): %w", o.OutDir, EnvOut, err)
	}
	s.logDir = filepath.Join(o.OutDir, "logs")
	cfgDir := filepath.Join(o.OutDir, "config")
	for _, d := range []string{s.logDir, cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	// scheduler_perf starts etcd by looking it up in PATH.
	etcd, err := etcdBinary(b.TempDir())
	if err != nil {
		return err
	}
	if err := os.Setenv("PATH", filepath.Dir(etcd)+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		return err
	}
	// Per-run scheduler logs go to files in ARTIFACTS, kept only when a
	// run fails; scheduler_perf's data items go to -data-items-dir.
	if err := os.Setenv("ARTIFACTS", s.logDir); err != nil {
		return err
	}
	if err := flag.Set("data-items-dir", o.OutDir); err != nil {
		return fmt.Errorf("setting scheduler_perf's -data-items-dir: %w", err)
	}
	s.runs = plan(o.Shapes, o.Variants, o.Reps)
	for _, r := range s.runs {
		s.byID[r.ID] = &runState{run: r}
	}
	if s.cfgFile, s.configs, err = writeConfig(cfgDir, s.runs); err != nil {
		return err
	}
	return nil
}

// pluginBuildDir is where the plugins of a build are (testenv's lookups,
// with their hints for a missing build).
func pluginBuildDir(b pluginBuild) (string, error) {
	switch b {
	case shapeFitBuild:
		return testenv.ShapeFitPluginDir()
	case noHintsBuild:
		return testenv.NoHintsPluginDir()
	case deviceShareBuild:
		return testenv.DeviceSharePluginDir()
	}
	return testenv.PluginDir()
}

// manager is the shim factories' manager: the current native run's.
func (s *suite) manager() (*shim.Manager, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mgr == nil {
		return nil, fmt.Errorf("schedplug perf: a native plugin was enabled outside a native run (no schedplug-host is running)")
	}
	return s.mgr, nil
}

// preRun runs before each run's etcd and scheduler start: for a native run
// it starts schedplug-host and the shim's manager.
func (s *suite) preRun(tCtx ktesting.TContext, w *perf.Workload) (func(), error) {
	st := s.byID[w.Name]
	if st == nil {
		return nil, fmt.Errorf("workload %q is not in the suite's plan", w.Name)
	}
	st.watchDone = make(chan struct{})
	// Every run shares this process with the runs before it: start each on
	// a collected heap, so that no run pays for the garbage of the last
	// (a 5000-node run leaves hundreds of MB).
	runtime.GC()
	debug.FreeOSMemory()
	if st.Variant == VariantExtender {
		return func() {
			// The scheduler's extender client keeps its connections alive
			// for 90 s after the last call; upstream's leak check would wait
			// for their goroutines that long after every extender run.
			extenderSrv.CloseClientConnections()
			s.writeProgress()
		}, nil
	}
	if !isNative(st.Variant) {
		return s.writeProgress, nil
	}
	sockDir, err := os.MkdirTemp("", "spperf-")
	if err != nil {
		return nil, err
	}
	host := testenv.NewHost(s.hostBin, s.buildDirs[st.shape.build], s.configs[configKey(st.Shape, st.Variant)], sockDir, filepath.Join(s.logDir, st.ID+"-host.log"))
	if err := host.StartAndWait(60 * time.Second); err != nil {
		os.RemoveAll(sockDir)
		return nil, err
	}
	st.wire = newWireStats()
	// SCHEDPLUG_FAST_PATH_SPIN, as kube-scheduler reads it, compares the
	// fast path's polling budgets.
	fromEnv, err := shim.ConfigFromEnv()
	if err != nil {
		host.Stop(5 * time.Second)
		os.RemoveAll(sockDir)
		return nil, err
	}
	mgr, err := shim.NewManager(shim.Config{
		FastPathSpin: fromEnv.FastPathSpin,
		Target:       host.Address,
		ClientID:     "scheduler_perf " + st.ID,
		Profiles:     []shim.Profile{{SchedulerName: "default-scheduler", Plugins: st.shape.plugins}},
		DialOptions:  []grpc.DialOption{grpc.WithStatsHandler(st.wire)},
		// The fast path's calls bypass gRPC's stats handler.
		OnFastCall:           st.wire.fastCall,
		DisableFastPath:      st.Variant == VariantNativeGRPC,
		EvaluateAllNodes:     st.Variant == VariantNativeAllNodes,
		NoVerdictReuse:       st.Variant == VariantNativeNoReuse,
		NoScoresAhead:        st.Variant == VariantNativeNoAhead,
		SimulatorAnnotations: annotationWriter(),
	})
	if err != nil {
		host.Stop(5 * time.Second)
		os.RemoveAll(sockDir)
		return nil, err
	}
	st.host, st.hostPid = host, host.Pid()
	s.mu.Lock()
	s.mgr = mgr
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.mgr = nil
		s.mu.Unlock()
		mgr.Close()
		host.Stop(10 * time.Second)
		os.RemoveAll(sockDir)
		s.writeProgress()
	}, nil
}

// annotationWriter is native-simannot's writer: every pod's patch, however
// fast pods are bound, unless SCHEDPLUG_SIMULATOR_ANNOTATIONS_QPS and
// _QUEUE set it as they set kube-scheduler's.
func annotationWriter() simannot.Options {
	if os.Getenv(shim.EnvSimulatorAnnotationsQPS) != "" || os.Getenv(shim.EnvSimulatorAnnotationsQueue) != "" {
		if cfg, err := shim.ConfigFromEnv(); err == nil {
			return cfg.SimulatorAnnotations
		}
	}
	return simannot.Options{QPS: 10000, Queue: 1 << 20}
}

// prepare runs once the apiserver and scheduler are up: it starts the
// watcher that takes the measurement window's snapshots.
func (s *suite) prepare(tCtx ktesting.TContext) error {
	st := s.currentRun(tCtx)
	if st == nil {
		return fmt.Errorf("cannot tell which run %q is", tCtx.Name())
	}
	client := tCtx.Client()
	go s.watch(tCtx, client, st)
	tCtx.Cleanup(func() {
		select {
		case <-st.watchDone:
		case <-time.After(30 * time.Second):
			tCtx.Errorf("the measurement watcher of %s did not stop", st.ID)
		}
	})
	return nil
}

func (s *suite) currentRun(tCtx ktesting.TContext) *runState {
	name := tCtx.Name()
	parts := strings.Split(name, "/")
	return s.byID[parts[len(parts)-1]]
}

// watch follows the measured pods: the creation of their namespace
// (just before the first of them) starts the window, the binding of the
// last one ends it.
func (s *suite) watch(ctx context.Context, client kubernetes.Interface, st *runState) {
	defer close(st.watchDone)
	for ctx.Err() == nil && st.start == nil {
		w, err := client.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + measureNamespace})
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if _, ok := ev.Object.(*v1.Namespace); ok && ev.Type == watch.Added {
				snap := takeSnapshot(st.wire, st.hostPid)
				st.start = &snap
				w.Stop()
				break
			}
		}
	}
	bound := map[string]bool{}
	rv := ""
	for ctx.Err() == nil {
		w, err := client.CoreV1().Pods(measureNamespace).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			rv = pod.ResourceVersion
			if pod.Spec.NodeName != "" && !bound[pod.Name] {
				bound[pod.Name] = true
				st.bound = len(bound)
				if st.bound == st.shape.Measured {
					snap := takeSnapshot(st.wire, st.hostPid)
					st.end = &snap
					if st.hostPid > 0 {
						st.hostHWMKB = procMemKB(st.hostPid, "VmHWM")
					}
					w.Stop()
					if ownsDevices(st.shape) {
						st.devices = readDevices(ctx, client)
					}
					return
				}
			}
		}
	}
}

// etcdBinary is $SCHEDPLUG_ETCD_BIN, or etcd built from the Go module
// proxy (go.etcd.io/etcd/server/v3, the version integration/go.mod pins)
// into dir. scheduler_perf finds it as "etcd" in PATH, so a binary of
// another name is linked as dir/etcd.
func etcdBinary(dir string) (string, error) {
	if p := os.Getenv(EnvEtcd); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		if info, err := os.Stat(abs); err != nil || info.IsDir() {
			return "", fmt.Errorf("%s=%s is not an etcd binary; unset it to build etcd from the Go module proxy", EnvEtcd, p)
		}
		if filepath.Base(abs) == "etcd" {
			return abs, nil
		}
		link := filepath.Join(dir, "etcd")
		return link, os.Symlink(abs, link)
	}
	return buildEtcd(filepath.Join(dir, "etcd"))
}

// result is one run's figures; per-pod figures are over the measured pods
// and the window from the first measured pod's creation to the last one's
// binding.
type result struct {
	ID      string `json:"id"`
	Shape   string `json:"workload"`
	Variant string `json:"variant"`
	Rep     int    `json:"rep"`
	Nodes   int    `json:"nodes"`
	// MeasuredPods were created, BoundPods were seen bound.
	MeasuredPods int `json:"measuredPods"`
	BoundPods    int `json:"boundPods"`
	// Throughput is scheduler_perf's SchedulingThroughput average
	// (pods/s sampled every second); 0 when the window was under a second.
	Throughput    float64 `json:"schedulingThroughputAverage"`
	ThroughputP50 float64 `json:"schedulingThroughputPerc50"`
	// WindowPodsPerSecond is MeasuredPods over the window.
	WindowSeconds       float64            `json:"windowSeconds"`
	WindowPodsPerSecond float64            `json:"windowPodsPerSecond"`
	ProcCPUMsPerPod     float64            `json:"processCpuMsPerPod"`
	ProcGCCPUMsPerPod   float64            `json:"processGcCpuMsPerPod"`
	HostCPUMsPerPod     float64            `json:"hostCpuMsPerPod,omitempty"`
	HostPeakRSSMB       float64            `json:"hostPeakRssMB,omitempty"`
	RPCsPerPod          float64            `json:"rpcsPerPod,omitempty"`
	RPCsPerPodByMethod  map[string]float64 `json:"rpcsPerPodByMethod,omitempty"`
	BytesSentPerPod     float64            `json:"bytesToHostPerPod,omitempty"`
	BytesRecvPerPod     float64            `json:"bytesFromHostPerPod,omitempty"`
	// RPCWallMs is the mean wall time of one call by method, as the shim
	// sees it (request out to answer in).
	RPCWallMs map[string]float64 `json:"rpcWallMsByMethod,omitempty"`
	// CycleMs is scheduler_perf's mean of kube-scheduler's own
	// extension-point histogram over the measured pods: "PreFilter",
	// "Filter", "PreScore" and "Score" per cycle. They show where a variant
	// lengthens the scheduling cycle, which kube-scheduler runs one pod at
	// a time. (Its attempt histogram is no use here: it ends after the
	// binding API call, which runs beside the next cycles.) Also "Reserve"
	// (the end of the scheduling cycle) and "PreBind" (in the binding
	// cycle, beside the next scheduling cycles: a plugin's API writes
	// before the binding are in it).
	CycleMs map[string]float64 `json:"cycleMs,omitempty"`
	// BatchAttempts counts the scheduler's opportunistic-batching
	// attempts in the window by result (none when a plugin cannot sign
	// pods, which turns batching off).
	BatchAttempts map[string]float64 `json:"batchAttempts,omitempty"`
	// VerdictReuse is the shim's verdict reuse per measured pod: "cycles"
	// answered from verdicts kept for identical replicas, and the "misses"
	// among them that called the host after all (native variants only).
	VerdictReuse map[string]float64 `json:"verdictReusePerPod,omitempty"`
	// FilterWindow is the shim's filter window per measured pod:
	// "windows" (PreFilter calls that asked about a window of nodes, not
	// every node), "misses" (cycles whose Filter went beyond it) and
	// "restNodes" (the nodes those cycles' FilterNodes calls asked about)
	// (native variants only).
	FilterWindow map[string]float64 `json:"filterWindowPerPod,omitempty"`
	// SimulatorAnnotations is the writer's work per measured pod
	// (native-simannot): results by what became of them ("written",
	// "dropped", ...), and the mean patch's time ("patchMs") and size
	// ("patchBytes").
	SimulatorAnnotations map[string]float64 `json:"simulatorAnnotationsPerPod,omitempty"`
	// ScoresAhead is the shim's scores ahead per measured pod by outcome:
	// "used" (no PreScore call), else why the cycle asked PreScore.
	ScoresAhead map[string]float64 `json:"scoresAheadPerPod,omitempty"`
	// FastPathCallsPerPodByMethod are the calls per measured pod that went
	// over the host's fast-path socket (the rest of RPCsPerPodByMethod went
	// over gRPC).
	FastPathCallsPerPodByMethod map[string]float64 `json:"fastPathCallsPerPodByMethod,omitempty"`
	// Devices is the devices workloads' check of the measured pods'
	// assignments, read after the window.
	Devices  *deviceCheck `json:"devices,omitempty"`
	Complete bool         `json:"complete"`
}

func (s *suite) results() []result {
	items := readDataItems(s.opts.OutDir, s.started)
	var out []result
	for _, r := range s.runs {
		st := s.byID[r.ID]
		res := result{ID: r.ID, Shape: r.Shape, Variant: r.Variant, Rep: r.Rep, Nodes: r.shape.Nodes,
			MeasuredPods: r.shape.Measured, BoundPods: st.bound, Devices: st.devices}
		for _, it := range items {
			if !strings.Contains(it.Labels["Name"], "/"+r.ID+"/") {
				continue
			}
			if it.Labels["Metric"] == "SchedulingThroughput" {
				res.Throughput, res.ThroughputP50 = it.Data["Average"], it.Data["Perc50"]
			}
			if k := cycleKey(it.Labels); k != "" && it.Unit == "ms" {
				if res.CycleMs == nil {
					res.CycleMs = map[string]float64{}
				}
				res.CycleMs[k] = it.Data["Average"]
			}
		}
		if st.start != nil && st.end != nil {
			res.Complete = true
			n := float64(r.shape.Measured)
			d := st.end.at.Sub(st.start.at).Seconds()
			res.WindowSeconds = d
			if d > 0 {
				res.WindowPodsPerSecond = n / d
			}
			res.ProcCPUMsPerPod = float64((st.end.procCPU - st.start.procCPU).Microseconds()) / 1000 / n
			res.ProcGCCPUMsPerPod = float64((st.end.gcCPU - st.start.gcCPU).Microseconds()) / 1000 / n
			for k, v := range st.end.batch {
				if d := v - st.start.batch[k]; d > 0 {
					if res.BatchAttempts == nil {
						res.BatchAttempts = map[string]float64{}
					}
					res.BatchAttempts[k] = d
				}
			}
			if isNative(st.Variant) {
				res.VerdictReuse = perPod(st.start.reuse, st.end.reuse, n)
				res.FilterWindow = perPod(st.start.window, st.end.window, n)
				res.ScoresAhead = perPod(st.start.ahead, st.end.ahead, n)
				res.FastPathCallsPerPodByMethod = perPod(st.start.fast, st.end.fast, n)
				res.SimulatorAnnotations = st.end.annotations.since(st.start.annotations, n)
				res.HostCPUMsPerPod = float64((st.end.hostCPU - st.start.hostCPU).Microseconds()) / 1000 / n
				res.HostPeakRSSMB = float64(st.hostHWMKB) / 1024
				res.RPCsPerPodByMethod = map[string]float64{}
				var total int64
				for m, v := range st.end.rpcs {
					d := v - st.start.rpcs[m]
					// NoteCycles goes off the scheduling cycle, and only when
					// no call came within 20 ms: listed by method, not
					// counted as a pod's call.
					if m != "NoteCycles" {
						total += d
					}
					if d > 0 {
						res.RPCsPerPodByMethod[m] = float64(d) / n
					}
				}
				res.RPCsPerPod = float64(total) / n
				res.RPCWallMs = map[string]float64{}
				for m, v := range st.end.rpcWall {
					if calls := st.end.rpcs[m] - st.start.rpcs[m]; calls > 0 {
						res.RPCWallMs[m] = float64((v - st.start.rpcWall[m]).Microseconds()) / 1000 / float64(calls)
					}
				}
				res.BytesSentPerPod = float64(st.end.sent-st.start.sent) / n
				res.BytesRecvPerPod = float64(st.end.recv-st.start.recv) / n
			}
		}
		out = append(out, res)
	}
	return out
}

// perPod is each counter's growth from start to end over n pods (nil
// when none grew).
func perPod(start, end map[string]float64, n float64) map[string]float64 {
	var out map[string]float64
	for k, v := range end {
		if d := v - start[k]; d > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[k] = d / n
		}
	}
	return out
}

// cycleStages are the extension points of filtering and scoring, whose
// durations results keep; hookStages the others they keep.
var (
	cycleStages = []string{"PreFilter", "Filter", "PreScore", "Score"}
	hookStages  = []string{"Reserve", "PreBind"}
)

// cycleKey names a data item that belongs in result.CycleMs ("" if none).
func cycleKey(labels map[string]string) string {
	if labels["Metric"] != "scheduler_framework_extension_point_duration_seconds" {
		return ""
	}
	if s := labels["extension_point"]; slices.Contains(cycleStages, s) || slices.Contains(hookStages, s) {
		return s
	}
	return ""
}

// readDataItems reads the data-item files scheduler_perf wrote into dir
// since this process started its runs.
func readDataItems(dir string, since time.Time) []perf.DataItem {
	files, _ := filepath.Glob(filepath.Join(dir, "*_benchmark_schedplug_*.json"))
	var out []perf.DataItem
	for _, f := range files {
		if info, err := os.Stat(f); err != nil || info.ModTime().Before(since) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var items perf.DataItems
		if json.Unmarshal(data, &items) == nil {
			out = append(out, items.DataItems...)
		}
	}
	return out
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
