package twin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type fakeHandle struct {
	profile string
	snap    fwk.SharedLister
}

func (h fakeHandle) ProfileName() string                    { return h.profile }
func (h fakeHandle) SnapshotSharedLister() fwk.SharedLister { return h.snap }

// wrong is a "native" plugin with a bug: it accepts a pod that asked for
// encryption everywhere.
type wrong struct{}

func (wrong) Name() string { return "HwEncrypt" }
func (wrong) Filter(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo) *fwk.Status {
	return nil
}

// TwinCheck must report a native plugin that disagrees with its twin, with
// pod, node and both verdicts, and stay quiet when they agree.
func TestCheckReportsDivergence(t *testing.T) {
	report := filepath.Join(t.TempDir(), "divergences.jsonl")
	t.Setenv(EnvReport, report)
	ni := nodeInfo(map[string]string{DefaultHwLabel: "false"})
	snap := cache.NewSnapshot(nil, []*v1.Node{ni.Node()})
	h := fakeHandle{profile: "twin-unit", snap: snap}
	twinPl, err := NewHwEncrypt("GoHwEncrypt")(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	remember(h, "GoHwEncrypt", twinPl)
	remember(h, "HwEncrypt", wrong{})
	remember(h, "Twin2", twinPl)
	c := &Check{handle: h, pairs: []Pair{{Native: "HwEncrypt", Twin: "GoHwEncrypt"}}, report: report, pods: map[types.UID]struct{}{}}

	state := framework.NewCycleState()
	p := pod(map[string]string{DefaultHwAnnotation: "true"})
	p.UID = "uid-1"
	if s := c.Filter(context.Background(), state, p, ni); !s.IsSuccess() {
		t.Fatalf("TwinCheck must never reject, got %v", s)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no divergence report written: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 {
		t.Fatalf("report has %d lines, want 1:\n%s", len(lines), data)
	}
	var d Divergence
	if err := json.Unmarshal([]byte(lines[0]), &d); err != nil {
		t.Fatal(err)
	}
	if d.Pod != "ns/p" || d.Node != "n" || d.NativeVerdict != "Success" || !strings.Contains(d.TwinVerdict, hwLacks) || d.Kind != "what-if" {
		t.Errorf("divergence = %+v", d)
	}

	// The same pair of identical plugins: no new line. A plugin skipped at
	// PreFilter counts as Success on both sides.
	c.pairs = []Pair{{Native: "Twin2", Twin: "GoHwEncrypt"}}
	if s := c.Filter(context.Background(), state, p, ni); !s.IsSuccess() {
		t.Fatal(s)
	}
	data, _ = os.ReadFile(report)
	if n := len(strings.Split(strings.TrimSpace(string(data)), "\n")); n != 1 {
		t.Errorf("agreeing plugins produced a divergence:\n%s", data)
	}
}
