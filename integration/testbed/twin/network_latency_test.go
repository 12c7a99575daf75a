package twin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// The file of plugins/network-latency/README.md: scores are microseconds,
// unlisted nodes get the default, and normalizing gives the lowest 100.
func TestNetworkLatencyScoresLikeTheNativePlugin(t *testing.T) {
	text := "# written by latency-agent at 2026-11-29T19:00:00Z\nnode-a 12.5\nnode-b 3\nnode-c 0.8   # same rack\n\n"
	r, err := NewNetworkLatencyRules(text, "latency.txt", DefaultLatencyMs)
	if err != nil {
		t.Fatal(err)
	}
	raw := []int64{r.Score("node-a"), r.Score("node-b"), r.Score("node-c"), r.Score("node-x")}
	if want := []int64{12500, 3000, 800, 100000}; !slices.Equal(raw, want) {
		t.Fatalf("raw scores %v, want %v", raw, want)
	}
	r.Normalize(raw)
	// (100000 - s) * 100 / 99200, rounded to nearest.
	if want := []int64{88, 98, 100, 0}; !slices.Equal(raw, want) {
		t.Errorf("normalized %v, want %v", raw, want)
	}
	same := []int64{7, 7}
	r.Normalize(same)
	if !slices.Equal(same, []int64{100, 100}) {
		t.Errorf("equal raw scores normalized to %v, want every node 100", same)
	}
}

func TestNetworkLatencyFileErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"node-a 1\nnode-g 12ms\n", `f:2: latency of node "node-g" must be a number of milliseconds from 0 to 3600000, got "12ms"`},
		{"node-a\n", `f:1: expected "<node-name> <milliseconds>", got "node-a"`},
		{"node-a 1\nnode-a 2\n", `f:2: node "node-a" is listed twice`},
		{"node-a 3600001\n", `f:1: latency of node "node-a" must be`},
	} {
		if _, err := NewNetworkLatencyRules(c.text, "f", DefaultLatencyMs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.text, err, c.want)
		}
	}
}

func TestNetworkLatencyArgs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "latency.txt")
	if err := os.WriteFile(file, []byte("n 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(s string) runtime.Object { return &runtime.Unknown{Raw: []byte(s)} }
	pl, err := NewNetworkLatency("GoNetworkLatency")(context.Background(), args(`{"latencyFile":"`+file+`","defaultLatencyMs":5}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*NetworkLatency)
	if got := p.rules.Score("n"); got != 2000 {
		t.Errorf("listed node: %d, want 2000", got)
	}
	if got := p.rules.Score("other"); got != 5000 {
		t.Errorf("unlisted node: %d, want the default 5000", got)
	}
	scores := fwk.NodeScoreList{{Name: "n", Score: 2000}, {Name: "other", Score: 5000}}
	if st := p.NormalizeScore(context.Background(), nil, nil, scores); st != nil {
		t.Fatal(st)
	}
	if scores[0].Score != 100 || scores[1].Score != 0 {
		t.Errorf("normalized %v, want 100 and 0", scores)
	}
	for _, bad := range []string{`{}`, `{"latencyFile":""}`, `{"latencyFile":"` + file + `","refresh":"1s"}`, `{"latencyFile":"/nonexistent/latency.txt"}`} {
		if _, err := NewNetworkLatency("GoNetworkLatency")(context.Background(), args(bad), nil); err == nil {
			t.Errorf("args %s: no error", bad)
		}
	}
}
