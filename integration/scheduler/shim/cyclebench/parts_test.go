package cyclebench

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"

	"schedplug.dev/integration/scheduler/shim"
)

// fastCalls sums what the shim's fast path tells of its calls
// (shim.Config.OnFastCall): their number, their wall time from encoding the
// request to decoding the answer, and the part of it spent reading the
// answer.
type fastCalls struct {
	mu    sync.Mutex
	n     int64
	wall  time.Duration
	read  time.Duration
	sent  int64
	recvd int64
}

func (f *fastCalls) add(c shim.FastCall) {
	f.mu.Lock()
	f.n++
	f.wall += c.Wall
	f.read += c.Read
	f.sent += int64(c.SentBytes)
	f.recvd += int64(c.ReceivedBytes)
	f.mu.Unlock()
}

// parts is every counter BenchmarkCycle reports beside ns/op, read before
// and after the timed loop (outside the timer): where a native cycle's
// time goes, apart from what a CPU profile shows (docs/performance.md,
// "Where the native cycle's extra time goes").
type parts struct {
	// This process (getrusage) and its garbage collector (runtime/metrics'
	// estimate): the collector's work other than idle marking, and its
	// marking on otherwise idle Ps, which is CPU too but only when some
	// is spare.
	cpu, gcCPU, gcIdleCPU time.Duration
	// The native variant only.
	calls             int64
	wall              time.Duration // the fast path's calls as the shim sees them
	read              time.Duration // of which reading their answers
	sent, recvd       int64
	hostCPU, hostCall time.Duration // schedplug-host's CPU (/proc), its own time in calls (its metrics)
	hostCalls         float64
	// The host's filter evaluations (one per plugin and node,
	// schedplug_plugin_calls_total) and FilterNodes calls; the shim's
	// windowed PreFilters, their misses and the nodes FilterNodes asked
	// about (its schedplug_shim_filter_window_* counters).
	hostFilters, filterNodesCalls          float64
	windows, windowMisses, windowRestNodes float64
}

func (e *env) parts(b *testing.B) parts {
	b.Helper()
	var p parts
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		p.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	gc := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(gc)
	if gc[0].Value.Kind() == metrics.KindFloat64 && gc[1].Value.Kind() == metrics.KindFloat64 {
		p.gcIdleCPU = time.Duration(gc[1].Value.Float64() * float64(time.Second))
		p.gcCPU = time.Duration(gc[0].Value.Float64()*float64(time.Second)) - p.gcIdleCPU
	}
	if e.host == nil {
		return p
	}
	e.calls.mu.Lock()
	p.calls, p.wall, p.read, p.sent, p.recvd = e.calls.n, e.calls.wall, e.calls.read, e.calls.sent, e.calls.recvd
	e.calls.mu.Unlock()
	p.hostCPU = procCPU(e.host.Pid())
	text, err := e.host.Metrics()
	if err != nil {
		b.Fatalf("reading the host's metrics: %v", err)
	}
	var seconds float64
	seconds, p.hostCalls = rpcDuration(text)
	p.hostCall = time.Duration(seconds * float64(time.Second))
	p.hostFilters, p.filterNodesCalls = hostEvaluations(text)
	p.windows, p.windowMisses, p.windowRestNodes = shimWindowCounters()
	return p
}

// report adds the counters' increase since before, per cycle, to the
// benchmark's line. CPU figures are process-wide, so they include what the
// other variant's idle scheduler does meanwhile (next to nothing).
func (p parts) report(b *testing.B, before parts) {
	n := float64(b.N)
	perOp := func(d time.Duration) float64 { return float64(d) / n }
	b.ReportMetric(perOp(p.cpu-before.cpu), "cpu-ns/op")
	b.ReportMetric(perOp(p.gcCPU-before.gcCPU), "gc-cpu-ns/op")
	b.ReportMetric(perOp(p.gcIdleCPU-before.gcIdleCPU), "gc-idle-cpu-ns/op")
	if p.calls == 0 && before.calls == 0 && p.hostCalls == 0 {
		return
	}
	b.ReportMetric(float64(p.calls-before.calls)/n, "calls/op")
	b.ReportMetric(perOp(p.wall-before.wall), "call-wall-ns/op")
	b.ReportMetric(perOp(p.read-before.read), "call-read-ns/op")
	b.ReportMetric(perOp(p.hostCall-before.hostCall), "host-call-ns/op")
	b.ReportMetric(perOp(p.hostCPU-before.hostCPU), "host-cpu-ns/op")
	b.ReportMetric(float64(p.sent-before.sent)/n, "B-to-host/op")
	b.ReportMetric(float64(p.recvd-before.recvd)/n, "B-from-host/op")
	b.ReportMetric((p.hostFilters-before.hostFilters)/n, "host-filters/op")
	b.ReportMetric((p.filterNodesCalls-before.filterNodesCalls)/n, "filternodes-calls/op")
	b.ReportMetric((p.windows-before.windows)/n, "windows/op")
	b.ReportMetric((p.windowMisses-before.windowMisses)/n, "window-misses/op")
	b.ReportMetric((p.windowRestNodes-before.windowRestNodes)/n, "filternodes-nodes/op")
}

// shimWindowCounters reads the shim's filter-window counters from the
// process's registry (only the native variant adds to them).
func shimWindowCounters() (windows, misses, restNodes float64) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return 0, 0, 0
	}
	for _, f := range families {
		var into *float64
		switch f.GetName() {
		case "schedplug_shim_filter_windows_total":
			into = &windows
		case "schedplug_shim_filter_window_misses_total":
			into = &misses
		case "schedplug_shim_filter_window_rest_nodes_total":
			into = &restNodes
		default:
			continue
		}
		for _, m := range f.GetMetric() {
			*into += m.GetCounter().GetValue()
		}
	}
	return windows, misses, restNodes
}

// rpcDuration sums schedplug_rpc_duration_seconds (the host's time in each
// call, by method) over the methods: seconds and calls.
func rpcDuration(text string) (seconds, calls float64) {
	sumSeries(text, func(line string) *float64 {
		switch {
		case strings.HasPrefix(line, "schedplug_rpc_duration_seconds_sum"):
			return &seconds
		case strings.HasPrefix(line, "schedplug_rpc_duration_seconds_count"):
			return &calls
		}
		return nil
	})
	return seconds, calls
}

// hostEvaluations reads the host's filter evaluations
// (schedplug_plugin_calls_total at extension_point "filter", summed over
// plugins) and its FilterNodes calls (schedplug_rpc_total, any code).
func hostEvaluations(text string) (filters, filterNodes float64) {
	sumSeries(text, func(line string) *float64 {
		switch {
		case strings.HasPrefix(line, "schedplug_plugin_calls_total{") && strings.Contains(line, `extension_point="filter"`):
			return &filters
		case strings.HasPrefix(line, "schedplug_rpc_total{") && strings.Contains(line, `method="FilterNodes"`):
			return &filterNodes
		}
		return nil
	})
	return filters, filterNodes
}

// sumSeries adds the value of each line of the host's metrics text to the
// figure `into` names for it (nil: none).
func sumSeries(text string, into func(line string) *float64) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		sum := into(line)
		if sum == nil {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			*sum += v
		}
	}
}

// procCPU is a process's user+system time from /proc/PID/stat (in ticks
// of 10 ms: BenchmarkCycle's default second makes it coarse, -benchtime
// 5s or more makes it useful).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+sy) * time.Second / 100
}
