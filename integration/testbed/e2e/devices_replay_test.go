package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"schedplug.dev/integration/testbed/testenv"
)

// A recording of DeviceShare, a plugin that owns a resource, replays with
// no difference on the same build: the recording holds its Reserve and
// PreBind calls beside the cycles' calls, and the replay sends them in the
// recorded order, so its Filter sees the devices reserved in flight as it
// did live (without them, pods that found a node's devices taken would
// pass in the replay). startupSettle is a nanosecond so that no live Reserve waits
// for the clock, which a replay cannot reproduce.
func TestDeviceShareRecordingReplaysWithoutDifference(t *testing.T) {
	dir, err := testenv.DeviceSharePluginDir()
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "record")
	mustDo(t, os.MkdirAll(record, 0o755))
	s := startStackWith(t, stackOptions{
		Plugins: []testenv.NativePlugin{{Name: "DeviceShare", FailurePolicy: "Fail", Timeout: "500ms",
			Args: map[string]any{"startupSettle": "1ns"}}},
		PluginDir: dir,
		ClientQPS: deviceClientQPS,
		HostArgs:  []string{"--record", record},
	})
	ctx := s.ctx()
	ns := s.namespace("devices-replay")
	nodes := createDeviceNodes(t, s)
	// 14 pods asking for 21 devices of 12: some wait.
	var pods []*corev1.Pod
	for i := 0; i < 14; i++ {
		pods = append(pods, testenv.MakePod(ns, devicePodSpec(fmt.Sprintf("dev-pod-%02d", i), 1+i%2, nil)))
	}
	s.must(testenv.CreatePods(ctx, s.client, pods...))
	state := waitDevicesSettled(t, s, ns, nodes)
	bound := 0
	for _, p := range state {
		if p.node != "" {
			bound++
		}
	}
	// The host writes what it queued when it stops.
	if !s.host.Stop(10 * time.Second) {
		t.Fatal("schedplug-host did not stop within 10s")
	}

	cli, err := testenv.CLIBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, cli, "replay", "--record", record, "--plugins", dir, "--json").Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Logf("schedplug replay: exit %d, stderr:\n%s", exit.ExitCode(), exit.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	var r replayReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("schedplug replay printed no report (%v):\n%s", err, out)
	}
	t.Logf("%d pods bound; replay: %d cycles of %d pods, %d calls, changed %+v", bound, r.Cycles, r.Pods, r.Calls, r.Changed)
	if r.Differs || r.Changed.FeasibleSetPods+r.Changed.BestNodePods+r.Changed.NewErrorPods+r.Changed.HookPods > 0 {
		t.Errorf("the replay of DeviceShare's recording on the same build differs: changed %+v, examples %+v", r.Changed, r.Examples)
	}
	// Every bound pod's Reserve and PreBind were replayed besides the
	// cycles' calls.
	if r.Calls < r.Cycles+2*bound {
		t.Errorf("the replay made %d calls for %d cycles and %d bound pods; want at least a Reserve and a PreBind per bound pod besides the cycles' calls", r.Calls, r.Cycles, bound)
	}
}
