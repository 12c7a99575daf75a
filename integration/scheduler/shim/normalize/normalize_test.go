package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// vectorsFile is shared with the host's test (test_normalize_vectors.cpp):
// both sides must give every vector's answer.
var vectorsFile = filepath.Join("..", "..", "..", "..", "proto", "testdata", "normalize_vectors.json")

type vector struct {
	Name   string  `json:"name"`
	Policy string  `json:"policy"`
	Raw    []int64 `json:"raw"`
	Want   []int64 `json:"want"`
	Error  string  `json:"error"`
}

func TestSharedVectors(t *testing.T) {
	data, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", vectorsFile, err)
	}
	if len(doc.Vectors) < 10 {
		t.Fatalf("%s holds %d vectors; expected the shared set", vectorsFile, len(doc.Vectors))
	}
	for _, v := range doc.Vectors {
		n, ok := pb.Normalization_value["NORMALIZATION_"+v.Policy]
		if !ok {
			t.Fatalf("%s: unknown policy %q", v.Name, v.Policy)
		}
		out := make([]int64, len(v.Raw))
		err := Into("P", pb.Normalization(n), v.Raw, out, func(i int) string { return "n" + strconv.Itoa(i) })
		switch {
		case v.Error != "":
			if err == nil || err.Error() != v.Error {
				t.Errorf("%s: error %v, want %q", v.Name, err, v.Error)
			}
		case err != nil:
			t.Errorf("%s: %v", v.Name, err)
		case !slices.Equal(out, v.Want):
			t.Errorf("%s: %v normalized to %v, want %v", v.Name, v.Raw, out, v.Want)
		}
		// In place, as the shim normalizes.
		inPlace := slices.Clone(v.Raw)
		if err := Into("P", pb.Normalization(n), inPlace, inPlace, func(i int) string { return "n" + strconv.Itoa(i) }); err == nil && !slices.Equal(inPlace, v.Want) {
			t.Errorf("%s: %v normalized in place to %v, want %v", v.Name, v.Raw, inPlace, v.Want)
		}
	}
}

func TestOwnNormalizerIsNotApplicable(t *testing.T) {
	if Applicable(pb.Normalization_NORMALIZATION_BY_PLUGIN) {
		t.Fatal("a plugin's own normalize_score cannot be applied by the shim")
	}
	err := Into("Custom", pb.Normalization_NORMALIZATION_BY_PLUGIN, []int64{1}, make([]int64, 1), func(int) string { return "n0" })
	if err == nil {
		t.Fatal("normalizing a plugin's own normalization in the shim succeeded")
	}
}
