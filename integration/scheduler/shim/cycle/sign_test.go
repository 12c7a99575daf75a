package cycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
)

func signPod(name string, annotations map[string]string, image string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Annotations: annotations,
			Labels: map[string]string{"app": "web", "pod-template-hash": "h1"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}},
	}
}

func filterInfo(hints uint64) *pb.PluginInfo {
	return &pb.PluginInfo{Name: "P", HasFilter: true, Hints: hints, Sha256: "aa"}
}

// scoreInfo describes a plugin with a native Score, and a Filter when
// filter is true.
func scoreInfo(filter bool, hints uint64) *pb.PluginInfo {
	return &pb.PluginInfo{Name: "S", HasFilter: filter, HasScore: true, Hints: hints, Sha256: "cc"}
}

func TestPluginSignatureRefusals(t *testing.T) {
	pod := signPod("a", nil, "img")
	for _, tc := range []struct {
		name string
		info *pb.PluginInfo
		want string
	}{
		{"no handshake", nil, SignRefusedUnknown},
		{"score without the score identity promise", scoreInfo(true, abi.HintFilterIgnoresPodIdentity), SignRefusedScore},
		{"score alone without the promise", scoreInfo(false, abi.HintFilterIgnoresPodIdentity|abi.HintFilterReadsDeclaredPodKeys), SignRefusedScore},
		{"score with its promise, filter without", scoreInfo(true, abi.HintScoreIgnoresPodIdentity), SignRefusedIdentity},
		{"filter without the identity promise", filterInfo(abi.HintFilterIgnoresNodePods), SignRefusedIdentity},
		{"filter with the score promise only", filterInfo(abi.HintScoreIgnoresPodIdentity), SignRefusedIdentity},
	} {
		if sig, refused := PluginSignature(tc.info, pod); refused != tc.want || sig != "" {
			t.Errorf("%s: got (%q, %q), want a refusal %q", tc.name, sig, refused, tc.want)
		}
	}
	if sig, refused := PluginSignature(&pb.PluginInfo{Name: "Neither"}, pod); sig != "" || refused != "" {
		t.Errorf("a plugin with neither Filter nor Score: got (%q, %q), want nothing to sign", sig, refused)
	}
}

func TestPluginSignatureCoversWhatThePluginReads(t *testing.T) {
	identity := filterInfo(abi.HintFilterIgnoresPodIdentity)
	keys := filterInfo(abi.HintFilterIgnoresPodIdentity | abi.HintFilterReadsDeclaredPodKeys)
	keys.PodAnnotationKeys = []string{"want"}
	containers := filterInfo(abi.HintFilterIgnoresPodIdentity)
	containers.Data = abi.DataPodContainers
	otherBuild := filterInfo(abi.HintFilterIgnoresPodIdentity)
	otherBuild.Sha256 = "bb"
	scores := scoreInfo(false, abi.HintScoreIgnoresPodIdentity)
	both := scoreInfo(true, abi.HintFilterIgnoresPodIdentity|abi.HintScoreIgnoresPodIdentity)
	// The keys a Filter declared do not cover its Score: every label and
	// annotation counts.
	bothKeys := scoreInfo(true, abi.HintAll)
	bothKeys.PodAnnotationKeys = []string{"want"}

	base := signPod("a", map[string]string{"want": "1", "tool": "x"}, "img")
	for _, tc := range []struct {
		name  string
		infoA *pb.PluginInfo
		infoB *pb.PluginInfo
		b     *v1.Pod
		equal bool
	}{
		{"another replica (name and uid differ)", identity, identity, signPod("b", map[string]string{"want": "1", "tool": "x"}, "img"), true},
		{"another replica, keys declared, undeclared label differs", keys, keys, signPod("b", map[string]string{"want": "1", "tool": "y"}, "img"), true},
		{"declared annotation differs", keys, keys, signPod("b", map[string]string{"want": "2", "tool": "x"}, "img"), false},
		{"all annotations read: an undeclared one differs", identity, identity, signPod("a", map[string]string{"want": "1", "tool": "y"}, "img"), false},
		{"image differs, containers not declared", identity, identity, signPod("a", map[string]string{"want": "1", "tool": "x"}, "other"), true},
		{"image differs, containers declared", containers, containers, signPod("a", map[string]string{"want": "1", "tool": "x"}, "other"), false},
		{"same pod, other build of the plugin", identity, otherBuild, base, false},
		{"Score alone, another replica", scores, scores, signPod("b", map[string]string{"want": "1", "tool": "x"}, "img"), true},
		{"Score alone, an annotation differs", scores, scores, signPod("b", map[string]string{"want": "1", "tool": "y"}, "img"), false},
		{"Filter and Score, another replica", both, both, signPod("b", map[string]string{"want": "1", "tool": "x"}, "img"), true},
		{"Filter and Score, keys declared, another replica", bothKeys, bothKeys, signPod("b", map[string]string{"want": "1", "tool": "x"}, "img"), true},
		{"Filter and Score, keys declared, an undeclared annotation differs", bothKeys, bothKeys, signPod("b", map[string]string{"want": "1", "tool": "y"}, "img"), false},
		{"Filter and Score, keys declared, an undeclared label differs", bothKeys, bothKeys, func() *v1.Pod {
			p := signPod("b", map[string]string{"want": "1", "tool": "x"}, "img")
			p.Labels["pod-template-hash"] = "h2"
			return p
		}(), false},
	} {
		a, ra := PluginSignature(tc.infoA, base)
		b, rb := PluginSignature(tc.infoB, tc.b)
		if ra != "" || rb != "" || a == "" {
			t.Fatalf("%s: refused (%q, %q) or empty", tc.name, ra, rb)
		}
		if (a == b) != tc.equal {
			t.Errorf("%s: signatures equal = %v, want %v", tc.name, a == b, tc.equal)
		}
	}
	// Map order in the conversion must not leak into the signature.
	many := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		many[k] = k
	}
	first, _ := PluginSignature(identity, signPod("a", many, "img"))
	for i := 0; i < 20; i++ {
		if again, _ := PluginSignature(identity, signPod("a", many, "img")); again != first {
			t.Fatal("the signature of one pod changed between calls (map order?)")
		}
	}
}
