package e2e

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"schedplug.dev/integration/testbed/testenv"
)

// A plugin's reason cut at its buffer's last byte can end inside a UTF-8
// character. The host answers in proto3 strings, which must be valid UTF-8:
// before it made every plugin text valid, such a reason made the whole
// PreFilter answer unreadable to the shim, so an Ignore plugin was skipped
// for the pod, which then landed on a node the plugin had rejected.
// EchoReason (plugins/testing/echo_reason.c) rejects every node for a pod
// annotated schedplug.io/echo and quotes the annotation, cut at a byte.
func TestReasonCutInsideACharacterKeepsTheVerdict(t *testing.T) {
	dir, err := testenv.EchoReasonPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	s := startStackWith(t, stackOptions{
		Plugins:   []testenv.NativePlugin{{Name: "EchoReason", FailurePolicy: "Ignore", Timeout: "500ms"}},
		PluginDir: dir,
	})
	ctx := s.ctx()
	ns := s.namespace("echo-reason")
	s.createNodes(ctx,
		testenv.MakeNode("plain-1", bigNode, nil),
		testenv.MakeNode("plain-2", bigNode, nil))

	// "refused: " is 9 bytes and "é" 2: the 255-byte cut falls inside
	// the 124th "é", leaving a lone lead byte at the end.
	echo := "x" + strings.Repeat("é", 200)
	s.must(testenv.CreatePods(ctx, s.client,
		testenv.MakePod(ns, testenv.PodSpec{Name: "echoed", Annotations: map[string]string{"schedplug.io/echo": echo}, CPU: "100m"}),
		testenv.MakePod(ns, testenv.PodSpec{Name: "quiet", CPU: "100m"})))

	// The plugin's text up to the last whole character.
	want := "refused: x" + strings.Repeat("é", 122)
	msg, err := testenv.WaitForFailedScheduling(ctx, s.client, ns, "echoed", want, 60*time.Second)
	s.must(err)
	t.Logf("FailedScheduling of %s/echoed: %q", ns, msg)
	if !utf8.ValidString(msg) {
		t.Errorf("the FailedScheduling message is not valid UTF-8: %q", msg)
	}
	if _, err := testenv.WaitForBound(ctx, s.client, ns, []string{"quiet"}, 60*time.Second); err != nil {
		t.Errorf("a pod without the annotation was not scheduled: %v", err)
	}
	placed, err := testenv.Placements(ctx, s.client, ns)
	s.must(err)
	if placed["echoed"] != "" {
		t.Errorf("pod echoed was bound to %s, which EchoReason rejects", placed["echoed"])
	}
}
