package perf

import (
	"math"
	"strings"
	"testing"
)

// TestCPUPerPodSummary checks the CPU figures' arithmetic and that the
// table prints them: each variant's process plus host CPU per pod (the
// median of the runs' sums) and its ratio to the twin's. No figure of a
// real run is asserted.
func TestCPUPerPodSummary(t *testing.T) {
	sh := shape{Name: "Mixed500", Nodes: 500}
	var runs []result
	for i, f := range []struct {
		variant          string
		proc, gc, host   float64
		windowPodsPerSec float64
	}{
		{VariantTwin, 8, 1, 0, 100}, {VariantTwin, 9, 1, 0, 90}, {VariantTwin, 10, 1, 0, 80},
		{VariantNative, 9, 1.5, 1, 80}, {VariantNative, 10, 1.5, 1.5, 70}, {VariantNative, 11, 2, 0.5, 90},
	} {
		runs = append(runs, result{ID: f.variant + string(rune('a'+i)), Shape: sh.Name, Variant: f.variant, Complete: true,
			ProcCPUMsPerPod: f.proc, ProcGCCPUMsPerPod: f.gc, HostCPUMsPerPod: f.host, WindowPodsPerSecond: f.windowPodsPerSec})
	}
	twin, native := summarize(sh, VariantTwin, runs), summarize(sh, VariantNative, runs)
	native.compare(&twin, nil)
	twin.compare(&twin, nil)
	if twin.CPUMsPerPod != 9 || native.CPUMsPerPod != 11.5 || native.ProcGCCPUMsPerPod != 1.5 {
		t.Fatalf("CPU per pod: twin %v, native %v (GC %v); want 9, 11.5 (GC 1.5)", twin.CPUMsPerPod, native.CPUMsPerPod, native.ProcGCCPUMsPerPod)
	}
	if want := 11.5 / 9; math.Abs(native.CPUVsTwin-want) > 1e-9 || twin.CPUVsTwin != 0 {
		t.Fatalf("CPU vs twin: native %v, twin %v; want %v and none", native.CPUVsTwin, twin.CPUVsTwin, want)
	}
	table := (&report{Summary: []summary{twin, native}}).table()
	if !strings.Contains(table, "CPU vs twin") || !strings.Contains(table, "1.28") {
		t.Fatalf("the table lacks the CPU ratio:\n%s", table)
	}
}
