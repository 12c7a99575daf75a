package shim

import (
	"bytes"
	"context"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/cycle"
)

// A native Score signs for kube-scheduler's batching when it promised that
// its scores ignore the pod's identity (and its Filter too, if it has
// one), through the shim plugin's SignPod, with the handshake's
// declarations; without the promise it refuses, naming the missing hint.
func TestSignPodOfNativeScores(t *testing.T) {
	e := newEnv(t, []*pb.PluginInfo{
		{Name: "Scores", HasScore: true, Hints: abi.HintScoreIgnoresPodIdentity, Sha256: "s1"},
		{Name: "Both", HasFilter: true, HasScore: true, Hints: abi.HintFilterIgnoresPodIdentity | abi.HintScoreIgnoresPodIdentity, Sha256: "b1"},
		{Name: "FilterPromiseOnly", HasFilter: true, HasScore: true, Hints: abi.HintFilterIgnoresPodIdentity, Sha256: "f1"},
		{Name: "ScorePromiseOnly", HasFilter: true, HasScore: true, Hints: abi.HintScoreIgnoresPodIdentity, Sha256: "p1"},
	}, nil)
	ctx := context.Background()
	sign := func(plugin, pod string, labels map[string]string) ([]fwk.SignFragment, *fwk.Status) {
		return e.plugins[plugin].SignPod(ctx, testPod(pod, labels))
	}
	for _, name := range []string{"Scores", "Both"} {
		a, st := sign(name, "replica-a", map[string]string{"app": "web"})
		if !st.IsSuccess() || len(a) != 1 {
			t.Fatalf("%s: SignPod = %v %v, want one fragment", name, a, st)
		}
		b, _ := sign(name, "replica-b", map[string]string{"app": "web"})
		if len(b) != 1 || !bytes.Equal(a[0].Value.([]byte), b[0].Value.([]byte)) {
			t.Errorf("%s: two replicas sign %v and %v, want equal signatures", name, a, b)
		}
		// A Score may read any label: all of them are in the signature.
		if c, _ := sign(name, "replica-c", map[string]string{"app": "batch"}); len(c) != 1 || bytes.Equal(a[0].Value.([]byte), c[0].Value.([]byte)) {
			t.Errorf("%s: pods with other labels sign %v and %v, want different signatures", name, a, c)
		}
	}
	for name, want := range map[string]string{"FilterPromiseOnly": cycle.SignRefusedScore, "ScorePromiseOnly": cycle.SignRefusedIdentity} {
		if frags, st := sign(name, "replica-a", nil); st.Code() != fwk.Unschedulable || st.Message() != want || frags != nil {
			t.Errorf("%s: SignPod = %v %v, want Unschedulable %q", name, frags, st, want)
		}
	}
}
