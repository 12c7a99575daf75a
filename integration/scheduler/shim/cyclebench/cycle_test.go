// Package cyclebench benchmarks one whole scheduling cycle of
// kube-scheduler with the sample plugins, native (the shim over a real
// schedplug-host) against their Go twins (testbed/twin). How to run it and
// compare the variants: docs/performance.md, "The cycle benchmark".
//
// One file: the benchmarks and TestCycleVariantsAgree run the same env (a
// kube-scheduler profile over fake informers, native or twin), and the test is
// what keeps the benchmark's variants comparable; the shapes they run are in
// shapes_test.go.
package cyclebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"schedplug.dev/integration/scheduler/shim"
	"schedplug.dev/integration/testbed/testenv"
)

const profileName = "default-scheduler"

// BenchmarkCycle is one scheduling cycle (kube-scheduler's own
// UpdateSnapshot and SchedulePod: PreFilter, Filter on the nodes
// percentageOfNodesToScore makes it visit, PreScore, Score,
// NormalizeScore, host selection) of a fresh pod of the perf suite's Mixed
// template, followed by the assumption of the pod on the chosen node, on a
// cluster of `nodes` nodes, with the in-tree default plugins plus the
// sample plugins: native (the shim and schedplug-host) or their Go twins.
func BenchmarkCycle(b *testing.B) { benchmarkCycles(b, mixedShape) }

// BenchmarkCycleNoHints is BenchmarkCycle in the perf suite's NoHints
// shape: DedicatedNodes built without its hints and NetworkLatency, native
// or as their Go twins, on nodes that all fit a pod of the default
// template.
func BenchmarkCycleNoHints(b *testing.B) { benchmarkCycles(b, noHintsShape) }

// BenchmarkCycleScoreOnly is BenchmarkCycle in the perf suite's ScoreOnly
// shape: NetworkLatency alone, native or as its Go twin, on nodes that
// all fit a pod of the default template.
func BenchmarkCycleScoreOnly(b *testing.B) { benchmarkCycles(b, scoreOnlyShape) }

func benchmarkCycles(b *testing.B, sh shape) {
	for _, n := range []int{500, 5000} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			for _, v := range []string{"native", "twin"} {
				b.Run("variant="+v, func(b *testing.B) {
					e := envFor(b, sh, n)[v]
					b.ReportAllocs()
					before := e.parts(b)
					b.ResetTimer()
					// Labelled for -cpuprofile's -tagfocus: the timed cycles and
					// the goroutines they start (Filter's and Score's workers),
					// not the setup (docs/performance.md).
					pprof.Do(context.Background(), pprof.Labels("cycle", v), func(context.Context) {
						for i := 0; i < b.N; i++ {
							e.cycle(b)
						}
					})
					b.StopTimer()
					e.parts(b).report(b, before)
				})
			}
		})
	}
}

// TestMain stops the hosts and schedulers the benchmarks started.
func TestMain(m *testing.M) {
	code := m.Run()
	envsMu.Lock()
	for _, vs := range envs {
		for _, e := range vs {
			e.stop()
		}
	}
	envsMu.Unlock()
	os.Exit(code)
}

var (
	envsMu sync.Mutex
	// envs: both variants of a shape and cluster size, built together the
	// first time either is asked for, so that both run beside the same live
	// heap.
	envs = map[envKey]map[string]*env{}
)

type envKey struct {
	shape string
	nodes int
}

func envFor(b *testing.B, sh shape, nodes int) map[string]*env {
	b.Helper()
	envsMu.Lock()
	defer envsMu.Unlock()
	k := envKey{sh.name, nodes}
	if vs := envs[k]; vs != nil {
		return vs
	}
	vs := map[string]*env{}
	envs[k] = vs
	for _, v := range []string{"native", "twin"} {
		e, err := newEnv(sh, nodes, v == "native", nil)
		if err != nil {
			b.Fatalf("%s, %d nodes, %s: %v", sh.name, nodes, v, err)
		}
		vs[v] = e
	}
	return vs
}

// env is one kube-scheduler (one profile) and its cluster.
type env struct {
	ctx    context.Context
	cancel context.CancelFunc
	sched  *scheduler.Scheduler
	fw     framework.Framework
	snap   *internalcache.Snapshot
	logger klog.Logger
	shape  shape
	// next is the index of the next pod; assumed the pods assumed on
	// their nodes, oldest first (keepAssumed of them at most).
	next    int
	assumed []*v1.Pod
	stops   []func()
	// host is the native variant's schedplug-host (nil for the twin) and
	// calls what the shim's fast path tells of its calls (partsOf).
	host  *testenv.Host
	calls fastCalls
}

// keepAssumed is how many of the benchmark's pods stay on their nodes: the
// oldest is forgotten when a cycle assumes one more, so that every cycle
// sees the cluster change on about two nodes (kube-scheduler sees the node
// of the pod it assumed last and its informers' updates) and the cluster
// does not fill up however long the benchmark runs.
const keepAssumed = 64

// newEnv builds a variant's scheduler for a shape on `nodes` nodes;
// percentage, when not nil, replaces percentageOfNodesToScore.
func newEnv(sh shape, nodes int, native bool, percentage *int32) (*env, error) {
	dir, err := os.MkdirTemp("", "cyclebench-")
	if err != nil {
		return nil, err
	}
	e := &env{logger: klog.Background(), shape: sh}
	e.stops = append(e.stops, func() { os.RemoveAll(dir) })
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.stops = append(e.stops, e.cancel)
	fail := func(err error) (*env, error) {
		e.stop()
		return nil, err
	}

	latency := filepath.Join(dir, "latency.txt")
	if err := os.WriteFile(latency, []byte(latencyText(nodes)), 0o644); err != nil {
		return fail(err)
	}
	cfgFile := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(cfgFile, []byte(configText(sh.natives, native, latency)), 0o644); err != nil {
		return fail(err)
	}
	cfg, err := options.LoadConfigFromFile(e.logger, cfgFile)
	if err != nil {
		return fail(err)
	}

	if percentage != nil {
		cfg.PercentageOfNodesToScore = percentage
	}
	registry := frameworkruntime.Registry{}
	if native {
		hostBin, err := testenv.HostBinary()
		if err != nil {
			return fail(err)
		}
		pluginDir, err := sh.pluginDir()
		if err != nil {
			return fail(err)
		}
		// Unix socket paths are limited to 107 bytes.
		sockDir, err := os.MkdirTemp("", "sp-")
		if err != nil {
			return fail(err)
		}
		e.stops = append(e.stops, func() { os.RemoveAll(sockDir) })
		host := testenv.NewHost(hostBin, pluginDir, cfgFile, sockDir, filepath.Join(dir, "host.log"))
		// Its metrics give the host's own time per call (parts.go).
		if err := host.ServeMetrics(); err != nil {
			return fail(err)
		}
		if err := host.StartAndWait(60 * time.Second); err != nil {
			return fail(err)
		}
		e.stops = append(e.stops, func() { host.Stop(10 * time.Second) })
		e.host = host
		// SCHEDPLUG_FAST_PATH_SPIN, as kube-scheduler reads it, compares
		// the fast path's polling budgets.
		fromEnv, err := shim.ConfigFromEnv()
		if err != nil {
			return fail(err)
		}
		mgr, err := shim.NewManager(shim.Config{
			Target:       host.Address,
			OnFastCall:   e.calls.add,
			FastPathSpin: fromEnv.FastPathSpin,
			ClientID:     fmt.Sprintf("cyclebench %d nodes", nodes),
			Profiles:     []shim.Profile{{SchedulerName: profileName, Plugins: sh.natives}},
		})
		if err != nil {
			return fail(err)
		}
		// Stopped before the host (stops run last first).
		e.stops = append(e.stops, mgr.Close)
		for _, n := range sh.natives {
			registry[n] = shim.FactoryFor(func() (*shim.Manager, error) { return mgr, nil }, n)
		}
	} else {
		for _, n := range sh.natives {
			registry[twinOf[n]] = newTwin(n)
		}
	}

	client := fake.NewClientset()
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	e.snap = internalcache.NewEmptySnapshot()
	e.sched, err = scheduler.New(e.ctx, client, informerFactory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithNodeInfoSnapshot(e.snap))
	if err != nil {
		return fail(err)
	}
	informerFactory.Start(e.ctx.Done())
	informerFactory.WaitForCacheSync(e.ctx.Done())
	e.fw = e.sched.Profiles[profileName]
	if e.fw == nil {
		return fail(fmt.Errorf("no profile %q", profileName))
	}

	// The cluster goes into kube-scheduler's cache, not the API: nodes
	// and one running pod on each, as the perf suite's workloads create
	// them.
	for i := 0; i < nodes; i++ {
		node := sh.node(i, nodes)
		e.sched.Cache.AddNode(e.logger, node)
		p := makePod(fmt.Sprintf("init-%d", i), -1)
		p.Spec.NodeName = node.Name
		if err := e.sched.Cache.AddPod(e.logger, p); err != nil {
			return fail(err)
		}
	}
	// Warm up: the shim's first cycles send the host its node table.
	for i := 0; i < 20; i++ {
		if _, err := e.run(); err != nil {
			return fail(err)
		}
	}
	return e, nil
}

func (e *env) stop() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
	e.stops = nil
}

func (e *env) cycle(b *testing.B) {
	if _, err := e.run(); err != nil {
		b.Fatal(err)
	}
}

// run schedules one fresh pod as kube-scheduler's ScheduleOne does up to
// the assumption (no Reserve, Permit or binding): the queue's Add and
// Pop, UpdateSnapshot, SchedulePod, AssumePod.
func (e *env) run() (scheduler.ScheduleResult, error) {
	pod := e.shape.pod(e.next)
	e.next++
	// Through the scheduling queue, as kube-scheduler's informer handler
	// and ScheduleOne do: it signs the pod and counts the cycle.
	e.sched.SchedulingQueue.Add(e.ctx, pod)
	entity, err := e.sched.SchedulingQueue.Pop(e.logger)
	if err != nil {
		return scheduler.ScheduleResult{}, err
	}
	defer e.sched.SchedulingQueue.Done(pod.UID)
	qpi, ok := entity.(*framework.QueuedPodInfo)
	if !ok || qpi.Pod.UID != pod.UID {
		return scheduler.ScheduleResult{}, fmt.Errorf("the queue gave %T %v, want pod %s", entity, entity, pod.Name)
	}
	if err := e.sched.Cache.UpdateSnapshot(e.logger, e.snap); err != nil {
		return scheduler.ScheduleResult{}, err
	}
	state := framework.NewCycleState()
	res, err := e.sched.SchedulePod(e.ctx, e.fw, state, qpi)
	if err != nil {
		return res, fmt.Errorf("scheduling %s: %w", pod.Name, err)
	}
	// kube-scheduler assumes a copy of the pod (assumedPodInfo).
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.SuggestedHost
	if err := e.sched.Cache.AssumePod(e.logger, assumed); err != nil {
		return res, err
	}
	e.assumed = append(e.assumed, assumed)
	if len(e.assumed) > keepAssumed {
		old := e.assumed[0]
		e.assumed = e.assumed[1:]
		if err := e.sched.Cache.ForgetPod(e.logger, old); err != nil {
			return res, err
		}
	}
	return res, nil
}

// configText is the scheduler configuration of a variant: the default
// profile with the sample plugins (native, read by kube-scheduler and the
// host) or their twins added.
func configText(natives []string, native bool, latencyFile string) string {
	var s strings.Builder
	s.WriteString(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: ` + profileName + `
    plugins:
      multiPoint:
        enabled:
`)
	for _, n := range natives {
		name := n
		if !native {
			name = twinOf[n]
		}
		s.WriteString("          - name: " + name + "\n")
	}
	s.WriteString("    pluginConfig:\n")
	for _, n := range natives {
		name := n
		if !native {
			name = twinOf[n]
		}
		s.WriteString("      - name: " + name + "\n        args:\n")
		if n == "NetworkLatency" {
			s.WriteString("          latencyFile: " + latencyFile + "\n")
		}
		if native {
			// As in the perf suite: on a loaded shared machine the default
			// 100ms would now and then apply the failure policy.
			s.WriteString("          schedplug:\n            timeout: 2s\n")
		} else if n != "NetworkLatency" {
			s.WriteString("          {}\n")
		}
	}
	return s.String()
}

// TestCycleVariantsAgree runs a few cycles of each variant of each shape on
// a small cluster, every node evaluated: the benchmarks' setup works, and
// native and twin find the same number of feasible nodes for the same pods.
func TestCycleVariantsAgree(t *testing.T) {
	for _, sh := range []shape{mixedShape, noHintsShape, scoreOnlyShape} {
		t.Run(sh.name, func(t *testing.T) { testVariantsAgree(t, sh) })
	}
}

func testVariantsAgree(t *testing.T, sh shape) {
	const nodes, pods = 200, 30
	var results [2][]scheduler.ScheduleResult
	for k, native := range []bool{true, false} {
		all := int32(100)
		e, err := newEnv(sh, nodes, native, &all)
		if err != nil {
			t.Fatalf("native %v: %v", native, err)
		}
		t.Cleanup(e.stop)
		for i := 0; i < pods; i++ {
			res, err := e.run()
			if err != nil {
				t.Fatalf("native %v: %v", native, err)
			}
			results[k] = append(results[k], res)
		}
	}
	for i := range results[0] {
		n, g := results[0][i], results[1][i]
		if n.FeasibleNodes != g.FeasibleNodes || n.EvaluatedNodes != nodes || g.EvaluatedNodes != nodes {
			t.Errorf("pod %d: native found %d feasible of %d evaluated nodes, twin %d of %d", i, n.FeasibleNodes, n.EvaluatedNodes, g.FeasibleNodes, g.EvaluatedNodes)
		}
	}
	f := results[0][len(results[0])-1].FeasibleNodes
	switch {
	case sh.filters && (f == 0 || f == nodes):
		t.Errorf("the last pod had %d feasible nodes of %d: the plugins filter nothing or everything", f, nodes)
	case !sh.filters && f != nodes:
		t.Errorf("the last pod had %d feasible nodes of %d: every node should fit it", f, nodes)
	}
}
