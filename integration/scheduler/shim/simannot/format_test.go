package simannot

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"sigs.k8s.io/yaml"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// scores is a PreScore answer for CycleAnswers (cycle.Scores in the shim).
type scores struct {
	nodes   []string
	plugins map[string]*pb.PluginScores
}

func (s scores) Nodes() []string                         { return s.nodes }
func (s scores) Of(plugin string) *pb.PluginScores       { return s.plugins[plugin] }
func status(code fwk.Code, reason ...string) *fwk.Status { return fwk.NewStatus(code, reason...) }

const hwReason = "node(s) didn't have hardware encryption (label node.kubernetes.io/hw-encrypt=true)"

// explainCycle is the cycle of docs/explain.md's example, as the shim
// notes it: HwEncrypt rejects plain-1, NetworkLatency (weight 5) scores
// enc-1 (5 ms) above enc-2 (40 ms), kube-scheduler reserves enc-1.
func explainCycle() *CycleAnswers {
	r := NewCycleAnswers(PodRef{Namespace: "explain", Name: "placed", UID: "uid-1"},
		[]string{"HwEncrypt", "NetworkLatency"}, map[string]int64{"NetworkLatency": 5}, 3)
	r.PreFilter("HwEncrypt", nil)
	r.Filter("HwEncrypt", "enc-1", nil)
	r.Filter("HwEncrypt", "enc-2", nil)
	r.Filter("HwEncrypt", "plain-1", status(fwk.UnschedulableAndUnresolvable, hwReason))
	r.PreScore("NetworkLatency", nil)
	r.Reserved("enc-1", scores{nodes: []string{"enc-1", "enc-2"}, plugins: map[string]*pb.PluginScores{
		"NetworkLatency": {Plugin: "NetworkLatency", Scores: []int64{100, 0}, Raw: []int64{5000, 40000}},
	}})
	return r
}

// The annotations, byte for byte, as the simulator's resultstore encodes
// the same results (encoding/json of its map types: keys sorted).
func TestAnnotationsGolden(t *testing.T) {
	got := explainCycle().Result().Annotations(DefaultBudget)
	want := map[string]string{
		PreFilterStatusKey:  `{"HwEncrypt":"success"}`,
		PreFilterResultKey:  `{}`,
		FilterResultKey:     `{"enc-1":{"HwEncrypt":"passed"},"enc-2":{"HwEncrypt":"passed"},"plain-1":{"HwEncrypt":"` + hwReason + `"}}`,
		PreScoreResultKey:   `{"NetworkLatency":"success"}`,
		ScoreResultKey:      `{"enc-1":{"NetworkLatency":"5000"},"enc-2":{"NetworkLatency":"40000"}}`,
		FinalScoreResultKey: `{"enc-1":{"NetworkLatency":"500"},"enc-2":{"NetworkLatency":"0"}}`,
		SelectedNodeKey:     `enc-1`,
	}
	if len(got) != len(want)+1 || got[NodesLeftOutKey] != nil {
		t.Errorf("keys %v; want %v and %s removed (nil)", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)), NodesLeftOutKey)
	}
	for k, w := range want {
		if got[k] == nil || *got[k] != w {
			t.Errorf("%s =\n  %v\nwant\n  %s", k, deref(got[k]), w)
		}
	}
}

// The sample in docs/simulator-annotations.md is this cycle's.
func TestTheDocsSampleIsTheGolden(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/simulator-annotations.md")
	if err != nil {
		t.Fatal(err)
	}
	var sample string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "    kube-scheduler-simulator.sigs.k8s.io/") {
			sample += line + "\n"
		}
	}
	var got map[string]string
	if err := yaml.Unmarshal([]byte(sample), &got); err != nil {
		t.Fatalf("the docs' sample does not parse: %v\n%s", err, sample)
	}
	want := map[string]string{}
	for k, v := range explainCycle().Result().Annotations(DefaultBudget) {
		if v != nil {
			want[k] = *v
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("the docs' sample is\n%v\nthe cycle's annotations are\n%v", got, want)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// The simulator's own test of its store (resultstore/store_test.go,
// TestStore_addSchedulingResultToPod "success"): plugin1 passes node0 and
// node1 and scores 10 there with weight 2. The same results give the same
// three annotations; its final score is the weighted normalized score,
// here also 10.
func TestAnnotationsAsTheSimulatorsStoreTest(t *testing.T) {
	r := NewCycleAnswers(PodRef{Namespace: "default", Name: "pod1", UID: "u"}, []string{"plugin1"}, map[string]int64{"plugin1": 2}, 2)
	r.Filter("plugin1", "node0", nil)
	r.Filter("plugin1", "node1", nil)
	r.Reserved("node0", scores{nodes: []string{"node0", "node1"}, plugins: map[string]*pb.PluginScores{
		"plugin1": {Plugin: "plugin1", Scores: []int64{10, 10}, Raw: []int64{10, 10}},
	}})
	got := r.Result().Annotations(DefaultBudget)
	for k, w := range map[string]string{
		FilterResultKey:     `{"node0":{"plugin1":"passed"},"node1":{"plugin1":"passed"}}`,
		ScoreResultKey:      `{"node0":{"plugin1":"10"},"node1":{"plugin1":"10"}}`,
		FinalScoreResultKey: `{"node0":{"plugin1":"20"},"node1":{"plugin1":"20"}}`,
	} {
		if deref(got[k]) != w {
			t.Errorf("%s = %s; want %s", k, deref(got[k]), w)
		}
	}
}

// The values parse into the simulator's types (its resultstore's result
// struct: maps of strings, by plugin or by node then plugin), and the
// statuses use its words.
func TestAnnotationsParseAsTheSimulatorsTypes(t *testing.T) {
	r := explainCycle()
	r.PreScore("HwEncrypt", status(fwk.Skip))
	got := r.Result().Annotations(DefaultBudget)
	var (
		preFilterStatus map[string]string
		preFilterResult map[string][]string
		filter          map[string]map[string]string
		preScore        map[string]string
		score           map[string]map[string]string
		finalScore      map[string]map[string]string
	)
	for key, into := range map[string]any{PreFilterStatusKey: &preFilterStatus, PreFilterResultKey: &preFilterResult,
		FilterResultKey: &filter, PreScoreResultKey: &preScore, ScoreResultKey: &score, FinalScoreResultKey: &finalScore} {
		if err := json.Unmarshal([]byte(deref(got[key])), into); err != nil {
			t.Fatalf("%s does not parse as %T: %v", key, into, err)
		}
	}
	if preScore["HwEncrypt"] != "" || preScore["NetworkLatency"] != SuccessMessage {
		t.Errorf("prescore-result %v; want a Skip as the simulator words it (its message, empty) and success", preScore)
	}
	for node, plugins := range score {
		for plugin, v := range plugins {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				t.Errorf("score-result[%s][%s] = %q is not a number", node, plugin, v)
			}
		}
	}
}

// Plugins that did not score (skipped, failed, unfinished) have no score
// entries; a host that sends no raw scores leaves the normalized ones.
func TestScoresOnlyOfPluginsKubeSchedulerUsed(t *testing.T) {
	r := NewCycleAnswers(PodRef{Name: "p", UID: "u"}, []string{"A", "B", "C", "D"}, nil, 1)
	r.Reserved("n1", scores{nodes: []string{"n1"}, plugins: map[string]*pb.PluginScores{
		"A": {Plugin: "A", Scores: []int64{7}},
		"B": {Plugin: "B", Skipped: true},
		"C": {Plugin: "C", Error: "plugin C failed"},
		"D": {Plugin: "D", Unfinished: "plugin D did not finish"},
	}})
	res := r.Result()
	if want := map[string]string{"A": "7"}; !maps.Equal(res.Score["n1"], want) || !maps.Equal(res.FinalScore["n1"], want) {
		t.Errorf("scores %v, final %v; want only A's 7 (weight 1)", res.Score, res.FinalScore)
	}
}

// Over the budget, whole nodes are left out, the selected and the
// rejected ones last, and the count is said.
func TestAnnotationsBudgetLeavesOutWholeNodes(t *testing.T) {
	const n = 2000
	r := NewCycleAnswers(PodRef{Name: "p", UID: "u"}, []string{"HwEncrypt", "NetworkLatency"}, nil, n)
	var feasible []string
	sc := &pb.PluginScores{Plugin: "NetworkLatency"}
	for i := range n {
		node := fmt.Sprintf("node-%04d", i)
		if i%10 == 3 {
			r.Filter("HwEncrypt", node, status(fwk.Unschedulable, hwReason))
			continue
		}
		r.Filter("HwEncrypt", node, nil)
		r.Filter("NetworkLatency", node, nil)
		feasible = append(feasible, node)
		sc.Scores = append(sc.Scores, int64(i%100))
		sc.Raw = append(sc.Raw, int64(i))
	}
	r.Reserved("node-1999", scores{nodes: feasible, plugins: map[string]*pb.PluginScores{"NetworkLatency": sc}})
	got := r.Result().Annotations(DefaultBudget)
	size := 0
	for _, v := range got {
		size += len(deref(v))
	}
	var filter, final map[string]map[string]string
	if err := json.Unmarshal([]byte(*got[FilterResultKey]), &filter); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(*got[FinalScoreResultKey]), &final); err != nil {
		t.Fatal(err)
	}
	left, _ := strconv.Atoi(deref(got[NodesLeftOutKey]))
	// The budget is the node maps'; the other values are a few dozen bytes.
	if size > DefaultBudget+1024 || left == 0 || left+len(filter) != n {
		t.Fatalf("%d bytes (budget %d), %d nodes listed, %s = %s; want within budget, listed + left out = %d", size, DefaultBudget, len(filter), NodesLeftOutKey, deref(got[NodesLeftOutKey]), n)
	}
	if _, ok := final["node-1999"]; !ok {
		t.Error("the selected node was left out")
	}
	for i := 3; i < n; i += 10 {
		if _, ok := filter[fmt.Sprintf("node-%04d", i)]; !ok {
			t.Fatalf("rejected node node-%04d left out while passed ones are listed", i)
		}
	}
	res := r.Result()
	for node := range filter {
		if _, scored := final[node]; !scored && !res.rejected(node) {
			t.Errorf("%s is in filter-result but not in finalscore-result: a node is in every map or none", node)
		}
	}
}

// kube-scheduler filters a pod's nominated node first and, when it fails
// there, again among all nodes: the answers keep every node's verdict, the
// later one for the node asked twice.
func TestANodeAskedTwiceLeavesRoomForTheOthers(t *testing.T) {
	r := NewCycleAnswers(PodRef{Name: "p", UID: "u"}, []string{"HwEncrypt"}, nil, 2)
	r.Filter("HwEncrypt", "nominated", status(fwk.Unschedulable, "busy"))
	r.Filter("HwEncrypt", "nominated", status(fwk.Unschedulable, "still busy"))
	r.Filter("HwEncrypt", "other", nil)
	got := r.Result().Filter
	if len(got) != 2 || got["nominated"]["HwEncrypt"] != "still busy" || got["other"]["HwEncrypt"] != PassedFilterMessage {
		t.Errorf("filter-result %v; want both nodes, the nominated one's later answer", got)
	}
}
