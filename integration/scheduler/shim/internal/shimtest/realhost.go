package shimtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"schedplug.dev/integration/testbed/testenv"
)

// StartRealHost starts schedplug-host for this test with the repository's
// scheduler configuration, its latency file replaced by a temporary one, and
// returns the address the shim dials. The host stops when the test ends.
func StartRealHost(t testing.TB) string {
	t.Helper()
	target, _ := StartRealHostWith(t, RealHost{})
	return target
}

// StartRealHostWithConfig is StartRealHost that also returns the
// configuration file the host read.
func StartRealHostWithConfig(t testing.TB) (target, configFile string) {
	t.Helper()
	return StartRealHostWith(t, RealHost{})
}

// RealHost is what StartRealHostWith changes in the repository's
// configuration.
type RealHost struct {
	// Latency is NetworkLatency's latency file ("enc 1\nplain 50\n" when
	// empty).
	Latency string
	// ScoreOnlyProfile, when set, names a second profile that enables
	// NetworkLatency alone (no native Filter), with the same latency file.
	ScoreOnlyProfile string
}

// StartRealHostWith is StartRealHostWithConfig with the changes of opts.
func StartRealHostWith(t testing.TB, opts RealHost) (target, configFile string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	hostBin, err := testenv.HostBinary()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir, err := testenv.PluginDir()
	if err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are limited to 107 bytes; t.TempDir() can be longer.
	sockDir, err := os.MkdirTemp("", "sp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	dir := t.TempDir()
	latency := filepath.Join(dir, "latency.txt")
	if opts.Latency == "" {
		opts.Latency = "enc 1\nplain 50\n"
	}
	if err := os.WriteFile(latency, []byte(opts.Latency), 0o644); err != nil {
		t.Fatal(err)
	}
	const shipped = "latencyFile: /etc/schedplug/latency/latency.txt"
	cfg, err := os.ReadFile(filepath.Join(root, "config", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), shipped) {
		t.Fatalf("config/scheduler-config.yaml no longer contains %q; update this test", shipped)
	}
	text := strings.Replace(string(cfg), shipped, "latencyFile: "+latency, 1)
	if opts.ScoreOnlyProfile != "" {
		// profiles is the file's last key: one more entry of its list.
		text += "  - schedulerName: " + opts.ScoreOnlyProfile + `
    plugins:
      multiPoint:
        enabled:
          - name: NetworkLatency
    pluginConfig:
      - name: NetworkLatency
        args:
          latencyFile: ` + latency + "\n"
	}
	configFile = filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(configFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	host := testenv.NewHost(hostBin, pluginDir, configFile, sockDir, filepath.Join(dir, "host.log"))
	if err := host.StartAndWait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !host.Stop(10 * time.Second) {
			t.Errorf("schedplug-host did not exit within 10s of SIGTERM; its log:\n%s", host.LogTail(30))
		}
	})
	return host.Address, configFile
}
