package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"schedplug.dev/integration/testbed/testenv"
)

const resultsFile = "results.json"

// summary is the median of one (workload, variant) over its repetitions.
type summary struct {
	Shape   string `json:"workload"`
	Variant string `json:"variant"`
	Nodes   int    `json:"nodes"`
	Reps    int    `json:"completeRuns"`
	// Medians of the runs' figures (see result).
	Throughput          float64 `json:"schedulingThroughputAverage"`
	WindowPodsPerSecond float64 `json:"windowPodsPerSecond"`
	ProcCPUMsPerPod     float64 `json:"processCpuMsPerPod"`
	ProcGCCPUMsPerPod   float64 `json:"processGcCpuMsPerPod"`
	HostCPUMsPerPod     float64 `json:"hostCpuMsPerPod,omitempty"`
	// CPUMsPerPod is the median of the runs' process plus host CPU per
	// pod: what a variant costs the machine per pod (etcd apart).
	CPUMsPerPod          float64            `json:"cpuMsPerPod"`
	HostPeakRSSMB        float64            `json:"hostPeakRssMB,omitempty"`
	RPCsPerPod           float64            `json:"rpcsPerPod,omitempty"`
	RPCsPerPodByMethod   map[string]float64 `json:"rpcsPerPodByMethod,omitempty"`
	BytesSentPerPod      float64            `json:"bytesToHostPerPod,omitempty"`
	BytesRecvPerPod      float64            `json:"bytesFromHostPerPod,omitempty"`
	BatchAttempts        map[string]float64 `json:"batchAttempts,omitempty"`
	VerdictReuse         map[string]float64 `json:"verdictReusePerPod,omitempty"`
	FilterWindow         map[string]float64 `json:"filterWindowPerPod,omitempty"`
	SimulatorAnnotations map[string]float64 `json:"simulatorAnnotationsPerPod,omitempty"`
	ScoresAhead          map[string]float64 `json:"scoresAheadPerPod,omitempty"`
	RPCWallMs            map[string]float64 `json:"rpcWallMsByMethod,omitempty"`
	CycleMs              map[string]float64 `json:"cycleMs,omitempty"`
	// Ratios of the median window throughputs. (scheduler_perf's figure
	// averages one-second samples, which is erratic at a few pods per
	// second, as in the preemption workload, and missing for windows under
	// a second.)
	VsTwin    float64 `json:"throughputVsTwin,omitempty"`
	VsDefault float64 `json:"throughputVsDefault,omitempty"`
	// CPUVsTwin is CPUMsPerPod over the twin's: 1.05 is 5 % more CPU per
	// pod than the Go twins (the goal in docs/performance.md).
	CPUVsTwin float64 `json:"cpuVsTwin,omitempty"`
}

type report struct {
	// Final is false while the suite runs (results.json is rewritten
	// after every run).
	Final       bool      `json:"final"`
	Size        string    `json:"size"`
	Repetitions int       `json:"repetitions"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished"`
	Seconds     float64   `json:"seconds"`
	Machine     machine   `json:"machine"`
	Runs        []result  `json:"runs"`
	Summary     []summary `json:"summary"`
}

type machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpuModel"`
	Kernel      string `json:"kernel"`
	GoVersion   string `json:"goVersion"`
	LoadBefore  string `json:"loadAverageBefore"`
	LoadAfter   string `json:"loadAverageAfter"`
	HostVersion string `json:"schedplugHost,omitempty"`
}

func (s *suite) report(started time.Time, load0, load1 string, final bool) *report {
	finished := time.Now()
	rep := &report{Final: final,
		Size: s.opts.SizeLabel, Repetitions: s.opts.Reps,
		Started: started, Finished: finished, Seconds: finished.Sub(started).Seconds(),
		Machine: machine{CPUs: runtime.NumCPU(), CPUModel: cpuModel(), Kernel: kernel(), GoVersion: runtime.Version(),
			LoadBefore: load0, LoadAfter: load1},
		Runs: s.results(),
	}
	for _, sh := range s.opts.Shapes {
		byVariant := map[string]*summary{}
		var variants []string
		for _, v := range s.opts.Variants {
			if !runsVariant(sh, v) {
				continue
			}
			sum := summarize(sh, v, rep.Runs)
			byVariant[v] = &sum
			variants = append(variants, v)
		}
		for _, v := range variants {
			sum := byVariant[v]
			sum.compare(byVariant[VariantTwin], byVariant[VariantDefault])
			rep.Summary = append(rep.Summary, *sum)
		}
	}
	return rep
}

// medians is the median of each key's values (nil when there are none).
func medians(values map[string][]float64) map[string]float64 {
	if len(values) == 0 {
		return nil
	}
	out := map[string]float64{}
	for k, v := range values {
		out[k] = median(v)
	}
	return out
}

// compare sets the ratios to the twin's and the default's summaries of
// the same workload (nil when not run).
func (s *summary) compare(twin, def *summary) {
	if twin != nil && s.Variant != VariantTwin {
		if twin.primary() > 0 {
			s.VsTwin = s.primary() / twin.primary()
		}
		if twin.CPUMsPerPod > 0 {
			s.CPUVsTwin = s.CPUMsPerPod / twin.CPUMsPerPod
		}
	}
	if def != nil && s.Variant != VariantDefault && def.primary() > 0 {
		s.VsDefault = s.primary() / def.primary()
	}
}

// primary is the throughput the ratios use.
func (s *summary) primary() float64 { return s.WindowPodsPerSecond }

func summarize(sh shape, variant string, runs []result) summary {
	sum := summary{Shape: sh.Name, Variant: variant, Nodes: sh.Nodes}
	var tp, win, proc, gc, host, cpu, rss, rpcs, sent, recv []float64
	methods := map[string][]float64{}
	batch := map[string][]float64{}
	reuse := map[string][]float64{}
	window := map[string][]float64{}
	annot := map[string][]float64{}
	ahead := map[string][]float64{}
	wall := map[string][]float64{}
	cycle := map[string][]float64{}
	for _, r := range runs {
		if r.Shape != sh.Name || r.Variant != variant || !r.Complete {
			continue
		}
		sum.Reps++
		if r.Throughput > 0 {
			tp = append(tp, r.Throughput)
		}
		win = append(win, r.WindowPodsPerSecond)
		proc = append(proc, r.ProcCPUMsPerPod)
		gc = append(gc, r.ProcGCCPUMsPerPod)
		host = append(host, r.HostCPUMsPerPod)
		cpu = append(cpu, r.ProcCPUMsPerPod+r.HostCPUMsPerPod)
		rss = append(rss, r.HostPeakRSSMB)
		rpcs = append(rpcs, r.RPCsPerPod)
		sent = append(sent, r.BytesSentPerPod)
		recv = append(recv, r.BytesRecvPerPod)
		for m, v := range r.RPCsPerPodByMethod {
			methods[m] = append(methods[m], v)
		}
		for k, v := range r.BatchAttempts {
			batch[k] = append(batch[k], v)
		}
		for k, v := range r.VerdictReuse {
			reuse[k] = append(reuse[k], v)
		}
		for k, v := range r.FilterWindow {
			window[k] = append(window[k], v)
		}
		for k, v := range r.SimulatorAnnotations {
			annot[k] = append(annot[k], v)
		}
		for k, v := range r.ScoresAhead {
			ahead[k] = append(ahead[k], v)
		}
		for k, v := range r.RPCWallMs {
			wall[k] = append(wall[k], v)
		}
		for k, v := range r.CycleMs {
			cycle[k] = append(cycle[k], v)
		}
	}
	sum.Throughput, sum.WindowPodsPerSecond, sum.ProcCPUMsPerPod = median(tp), median(win), median(proc)
	sum.HostCPUMsPerPod, sum.HostPeakRSSMB, sum.RPCsPerPod = median(host), median(rss), median(rpcs)
	sum.ProcGCCPUMsPerPod, sum.CPUMsPerPod = median(gc), median(cpu)
	sum.BytesSentPerPod, sum.BytesRecvPerPod = median(sent), median(recv)
	sum.BatchAttempts, sum.RPCsPerPodByMethod = medians(batch), medians(methods)
	sum.VerdictReuse, sum.SimulatorAnnotations, sum.ScoresAhead = medians(reuse), medians(annot), medians(ahead)
	sum.RPCWallMs, sum.CycleMs, sum.FilterWindow = medians(wall), medians(cycle), medians(window)
	return sum
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *report) write(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	file := filepath.Join(dir, resultsFile)
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the results %s: %w", file, err)
	}
	return nil
}

// table is the summary as aligned text: medians over the repetitions.
func (r *report) table() string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "\nschedplug scheduler_perf, %s suite, median of %d, %.0fs; load average %s before, %s after; %d CPUs %s\n",
		r.Size, r.Repetitions, r.Seconds, r.Machine.LoadBefore, r.Machine.LoadAfter, r.Machine.CPUs, r.Machine.CPUModel)
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "workload\tvariant\truns\tscheduler_perf pods/s\twindow pods/s\tvs twin\tvs default\tproc CPU ms/pod\tof it GC\thost CPU ms/pod\tCPU vs twin\thost RSS MB\tRPCs/pod\tB to host/pod\tB from host/pod\t")
	for _, s := range r.Summary {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%.1f\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			s.Shape, s.Variant, s.Reps, num(s.Throughput, "%.1f"), s.WindowPodsPerSecond,
			num(s.VsTwin, "%.2f"), num(s.VsDefault, "%.2f"), s.ProcCPUMsPerPod, s.ProcGCCPUMsPerPod,
			native(s, s.HostCPUMsPerPod, "%.2f"), num(s.CPUVsTwin, "%.2f"), native(s, s.HostPeakRSSMB, "%.1f"), native(s, s.RPCsPerPod, "%.1f"),
			native(s, s.BytesSentPerPod, "%.0f"), native(s, s.BytesRecvPerPod, "%.0f"))
	}
	w.Flush()
	var methods []string
	for _, s := range r.Summary {
		if len(s.RPCsPerPodByMethod) == 0 {
			continue
		}
		methods = append(methods, fmt.Sprintf("  %s/%s: %s", s.Shape, s.Variant, keyed(s.RPCsPerPodByMethod, "%.2f", "")))
	}
	if len(methods) > 0 {
		fmt.Fprintf(&buf, "RPCs per measured pod by method:\n%s\n", strings.Join(methods, "\n"))
	}
	var reuse []string
	for _, s := range r.Summary {
		if isNative(s.Variant) {
			reuse = append(reuse, fmt.Sprintf("  %s/%s: %s", s.Shape, s.Variant, keyed(s.VerdictReuse, "%.2f", "none")))
		}
	}
	if len(reuse) > 0 {
		fmt.Fprintf(&buf, "cycles answered from verdicts kept for identical replicas, per measured pod (misses: of those, the ones that called after all):\n%s\n", strings.Join(reuse, "\n"))
	}
	if window := r.keyedLines(func(s summary) map[string]float64 { return s.FilterWindow }); len(window) > 0 {
		fmt.Fprintf(&buf, "filter windows per measured pod (windows: PreFilter calls that asked about the nodes kube-scheduler was expected to visit; misses: cycles whose Filter went beyond; restNodes: the nodes their FilterNodes calls asked about):\n%s\n", strings.Join(window, "\n"))
	}
	if annot := r.keyedLines(func(s summary) map[string]float64 { return s.SimulatorAnnotations }); len(annot) > 0 {
		fmt.Fprintf(&buf, "simulator annotations per measured pod, by result (patchMs, patchBytes: the mean patch):\n%s\n", strings.Join(annot, "\n"))
	}
	if ahead := r.keyedLines(func(s summary) map[string]float64 { return s.ScoresAhead }); len(ahead) > 0 {
		fmt.Fprintf(&buf, "scores ahead per measured pod (used: no PreScore call; the others asked PreScore, and why):\n%s\n", strings.Join(ahead, "\n"))
	}
	var batch []string
	for _, s := range r.Summary {
		batch = append(batch, fmt.Sprintf("  %s/%s: %s", s.Shape, s.Variant, keyed(s.BatchAttempts, "%.0f", "none")))
	}
	fmt.Fprintf(&buf, "opportunistic batching attempts in the window, by result:\n%s\n", strings.Join(batch, "\n"))
	fmt.Fprintf(&buf, "scheduling cycle, mean ms per pod (kube-scheduler's extension-point histogram, PreBind in the binding cycle; RPC wall time as the shim sees it):\n")
	w = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "workload\tvariant\tPreFilter\tFilter\tPreScore\tScore\tthe four\tReserve\tPreBind\tRPC wall, by method\t")
	for _, s := range r.Summary {
		var stages float64
		for _, st := range cycleStages {
			stages += s.CycleMs[st]
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Shape, s.Variant,
			num(s.CycleMs["PreFilter"], "%.2f"), num(s.CycleMs["Filter"], "%.2f"),
			num(s.CycleMs["PreScore"], "%.2f"), num(s.CycleMs["Score"], "%.2f"), num(stages, "%.2f"),
			num(s.CycleMs["Reserve"], "%.2f"), num(s.CycleMs["PreBind"], "%.2f"), keyed(s.RPCWallMs, "%.2f", "-"))
	}
	w.Flush()
	return buf.String()
}

// keyed is "k1 v1, k2 v2, ..." sorted by key, each value printed with
// format; none when the map is empty.
func keyed(m map[string]float64, format, none string) string {
	if len(m) == 0 {
		return none
	}
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+" "+fmt.Sprintf(format, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func num(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func native(s summary, v float64, format string) string {
	if !isNative(s.Variant) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "model name") {
			if _, v, ok := strings.Cut(line, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}

func kernel() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// buildEtcd builds etcd's server command from the Go module cache/proxy,
// at the version integration/go.mod requires, into out.
func buildEtcd(out string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", out, "go.etcd.io/etcd/server/v3")
	cmd.Dir = filepath.Join(root, "integration")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building etcd (go build go.etcd.io/etcd/server/v3 in %s): %v\n%s\nset %s to an etcd binary to skip the build", cmd.Dir, err, msg, EnvEtcd)
	}
	return out, nil
}

// keyedLines is one line of figures (two decimals) per summary that has
// any.
func (r *report) keyedLines(figures func(summary) map[string]float64) []string {
	var lines []string
	for _, s := range r.Summary {
		if m := figures(s); len(m) > 0 {
			lines = append(lines, fmt.Sprintf("  %s/%s: %s", s.Shape, s.Variant, keyed(m, "%.2f", "")))
		}
	}
	return lines
}
