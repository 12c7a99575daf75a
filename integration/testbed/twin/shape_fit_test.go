package twin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// shapeFitCases is plugins/shape-fit/tests/data/cases.json, which the
// native plugin's test checks too: both give the same scores.
type shapeFitCases struct {
	Cases []struct {
		Name  string           `json:"name"`
		Args  ShapeFitArgs     `json:"args"`
		Pod   map[string]int64 `json:"pod"`
		Nodes []struct {
			Name        string           `json:"name"`
			Allocatable map[string]int64 `json:"allocatable"`
			Requested   map[string]int64 `json:"requested"`
			Score       int64            `json:"score"`
		} `json:"nodes"`
	} `json:"cases"`
}

func TestShapeFitScoresLikeTheNativePlugin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "plugins", "shape-fit", "tests", "data", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs shapeFitCases
	if err := json.Unmarshal(data, &cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Cases {
		r, err := NewShapeFitRules(c.Args)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, n := range c.Nodes {
			left := make([]int64, len(r.Resources()))
			for i, res := range r.Resources() {
				left[i] = n.Allocatable[res] - n.Requested[res] - c.Pod[res]
			}
			if got := r.Score(left); got != n.Score {
				t.Errorf("%s, node %s: score %d, want %d", c.Name, n.Name, got, n.Score)
			}
		}
	}
}

// BenchmarkShapeFitScore is one node's Score with the perf suite's
// Compute args.
func BenchmarkShapeFitScore(b *testing.B) {
	res := 64
	r, err := NewShapeFitRules(ShapeFitArgs{Resolution: &res, Shapes: []map[string]int64{
		{"cpu": 100, "memory": 524288000}, {"cpu": 250, "memory": 268435456}, {"cpu": 500, "memory": 1073741824},
		{"cpu": 1000, "memory": 2147483648}, {"cpu": 2000, "memory": 4294967296}, {"cpu": 250, "memory": 2147483648},
		{"cpu": 1000, "memory": 1073741824}, {"cpu": 4000, "memory": 8589934592}}})
	if err != nil {
		b.Fatal(err)
	}
	left := []int64{3500, 32<<30 - 1500<<20}
	for b.Loop() {
		r.Score(left)
	}
}
