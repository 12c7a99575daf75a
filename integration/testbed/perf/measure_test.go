package perf

import (
	"context"
	"fmt"
	"os"
	"path"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc/stats"
	"k8s.io/component-base/metrics/legacyregistry"

	"schedplug.dev/integration/scheduler/shim"
)

// wireStats is a gRPC stats handler on the shim's connection: RPCs by
// method and message bytes each way (gRPC payload as sent on the wire,
// with its 5-byte frame header; HTTP/2 headers not counted).
type wireStats struct {
	mu   sync.Mutex
	rpcs map[string]int64
	// wall is the summed wall time of finished calls by method, from the
	// call's start to its end as the shim sees them: the time a scheduling
	// cycle waits on the host.
	wall map[string]time.Duration
	sent atomic.Int64
	recv atomic.Int64
}

type methodKey struct{}

func newWireStats() *wireStats {
	return &wireStats{rpcs: map[string]int64{}, wall: map[string]time.Duration{}}
}

func (w *wireStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, path.Base(info.FullMethodName))
}

func (w *wireStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch st := s.(type) {
	case *stats.Begin:
		if m, ok := ctx.Value(methodKey{}).(string); ok {
			w.mu.Lock()
			w.rpcs[m]++
			w.mu.Unlock()
		}
	case *stats.End:
		if m, ok := ctx.Value(methodKey{}).(string); ok {
			w.mu.Lock()
			w.wall[m] += st.EndTime.Sub(st.BeginTime)
			w.mu.Unlock()
		}
	case *stats.OutPayload:
		w.sent.Add(int64(st.WireLength))
	case *stats.InPayload:
		w.recv.Add(int64(st.WireLength))
	}
}

// fastCall counts a call made over the host's fast-path socket like a
// gRPC one (its frame bytes, with their 4-byte length, as the wire bytes).
func (w *wireStats) fastCall(c shim.FastCall) {
	w.mu.Lock()
	w.rpcs[c.Method]++
	w.wall[c.Method] += c.Wall
	w.mu.Unlock()
	w.sent.Add(int64(c.SentBytes))
	w.recv.Add(int64(c.ReceivedBytes))
}

func (w *wireStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (w *wireStats) HandleConn(context.Context, stats.ConnStats)                       {}

// snapshot is every counter at one moment.
type snapshot struct {
	at      time.Time
	procCPU time.Duration // this process: apiserver, scheduler, shim, pod creation
	gcCPU   time.Duration // of which its Go garbage collector (runtime/metrics' estimate)
	hostCPU time.Duration // schedplug-host (native variant only)
	rpcs    map[string]int64
	rpcWall map[string]time.Duration
	sent    int64
	recv    int64
	// batch is scheduler_batch_attempts_total by result: whether the
	// scheduler's opportunistic batching (reusing the previous cycle's
	// results for an identical pod) was possible.
	batch map[string]float64
	// reuse is the shim's verdict-reuse counters: "cycles" answered from
	// kept verdicts and the "misses" among them that called after all.
	reuse map[string]float64
	// window is the shim's filter-window counters: PreFilter calls that
	// asked about a window of nodes ("windows"), the cycles whose Filter
	// went beyond it ("misses"), the nodes their FilterNodes calls
	// asked about ("restNodes"), and the Filter calls outside it answered
	// without a call after kube-scheduler's walk had ended ("lateVisits").
	window map[string]float64
	// annotations is the simulator annotations' writer's counters.
	annotations annotationCounters
	// ahead is schedplug_shim_scores_ahead_total by outcome: cycles whose
	// scores came ahead ("used") or that asked PreScore after all, and why.
	ahead map[string]float64
	// fast is schedplug_shim_fast_path_calls_total by method: the calls
	// made over the host's fast-path socket.
	fast map[string]float64
}

func takeSnapshot(w *wireStats, hostPid int) snapshot {
	s := snapshot{at: time.Now(), procCPU: selfCPU(), gcCPU: selfGCCPU(), rpcs: map[string]int64{}, rpcWall: map[string]time.Duration{},
		batch: counterByLabel("scheduler_batch_attempts_total", "result"), reuse: verdictReuse(), window: filterWindow(),
		ahead: counterByLabel("schedplug_shim_scores_ahead_total", "outcome"), annotations: readAnnotationCounters(),
		fast: counterByLabel("schedplug_shim_fast_path_calls_total", "method")}
	if hostPid > 0 {
		s.hostCPU, _ = procCPU(hostPid)
	}
	if w != nil {
		w.mu.Lock()
		for k, v := range w.rpcs {
			s.rpcs[k] = v
		}
		for k, v := range w.wall {
			s.rpcWall[k] = v
		}
		w.mu.Unlock()
		s.sent, s.recv = w.sent.Load(), w.recv.Load()
	}
	return s
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfGCCPU is the CPU time this process's garbage collector has used
// (runtime/metrics /cpu/classes/gc/total, which the runtime updates at
// every collection: an estimate, exact enough over a window of many).
func selfGCCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// procCPU is user+system CPU time of a process from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	// After the command: state(3) ... utime(14) stime(15), 1-based.
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	sy, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	return time.Duration(u+sy) * time.Second / clockTicks, nil
}

// procMemKB reads a "VmXXX:" line (kB) of /proc/PID/status.
func procMemKB(pid int, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, key+":") {
			f := strings.Fields(line[len(key)+1:])
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// verdictReuse reads the shim's verdict-reuse counters from the same
// registry.
func verdictReuse() map[string]float64 {
	return countersNamed(map[string]string{"schedplug_shim_verdict_reuse_cycles_total": "cycles", "schedplug_shim_verdict_reuse_misses_total": "misses"})
}

// filterWindow reads the shim's filter-window counters.
func filterWindow() map[string]float64 {
	return countersNamed(map[string]string{"schedplug_shim_filter_windows_total": "windows",
		"schedplug_shim_filter_window_misses_total": "misses", "schedplug_shim_filter_window_rest_nodes_total": "restNodes",
		"schedplug_shim_filter_window_late_visits_total": "lateVisits"})
}

// countersNamed reads counters from the registry the in-process scheduler
// and shim report to: out[key] is the sum of the counter keyNames names
// `key`.
func countersNamed(keyNames map[string]string) map[string]float64 {
	out := map[string]float64{}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if key, ok := keyNames[f.GetName()]; ok {
			for _, m := range f.GetMetric() {
				out[key] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// counterByLabel reads a counter from the registry the in-process
// scheduler and shim report to, summed per value of one label (e.g.
// scheduler_batch_attempts_total by result).
func counterByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			value := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					value = l.GetValue()
				}
			}
			out[value] += m.GetCounter().GetValue()
		}
	}
	return out
}

// annotationCounters are the simulator annotations' writer's metrics:
// results by what became of them, and the patches' count and total time.
type annotationCounters struct {
	results                           map[string]float64
	patches, patchSeconds, patchBytes float64
}

func readAnnotationCounters() annotationCounters {
	out := annotationCounters{results: map[string]float64{}}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "schedplug_shim_simulator_annotations_total":
				for _, l := range m.GetLabel() {
					if l.GetName() == "result" {
						out.results[l.GetValue()] += m.GetCounter().GetValue()
					}
				}
			case "schedplug_shim_simulator_annotations_patch_seconds":
				out.patches += float64(m.GetHistogram().GetSampleCount())
				out.patchSeconds += m.GetHistogram().GetSampleSum()
			case "schedplug_shim_simulator_annotations_patch_bytes":
				out.patchBytes += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

// since is the work between two readings per pod, and the mean patch's
// time in ms ("patchMs") and size ("patchBytes"); nil when nothing was
// written.
func (a annotationCounters) since(before annotationCounters, pods float64) map[string]float64 {
	patches := a.patches - before.patches
	if patches <= 0 {
		return nil
	}
	out := map[string]float64{"patchMs": 1000 * (a.patchSeconds - before.patchSeconds) / patches,
		"patchBytes": (a.patchBytes - before.patchBytes) / patches}
	for k, v := range a.results {
		if d := v - before.results[k]; d > 0 {
			out[k] = d / pods
		}
	}
	return out
}
