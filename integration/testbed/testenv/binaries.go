package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// BuildHint is what to do when a binary the end-to-end tests need is
// missing. The tests fail (never skip) with it.
const BuildHint = "build the C++ tree first: `bash tools/dev/test.sh` from the repository root does it all, " +
	"or `cmake -S . -B build -G Ninja && cmake --build build`; " +
	"or point SCHEDPLUG_HOST_BIN / SCHEDPLUG_PLUGIN_DIR at an existing build"

// RepoRoot finds the repository root: the nearest directory above the
// working directory (or, failing that, above this source file) that holds
// integration/go.mod.
func RepoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "integration", "go.mod")); err == nil {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the schedplug repository root (a directory holding integration/go.mod) above %v", starts)
}

// HostBinary is schedplug-host: $SCHEDPLUG_HOST_BIN, or build/host/schedplug-host.
func HostBinary() (string, error) {
	return binaryFromEnv("SCHEDPLUG_HOST_BIN", filepath.Join("build", "host", "schedplug-host"), "schedplug-host")
}

// PluginDir is the directory of sample plugin .so files:
// $SCHEDPLUG_PLUGIN_DIR, or build/plugins.d. It must hold every sample.
func PluginDir() (string, error) {
	dir := os.Getenv("SCHEDPLUG_PLUGIN_DIR")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "build", "plugins.d")
	}
	for _, so := range []string{"hw_encrypt.so", "dedicated_nodes.so", "network_latency.so"} {
		if _, err := os.Stat(filepath.Join(dir, so)); err != nil {
			return "", fmt.Errorf("sample plugin %s is missing from the plugin directory %s: %s", so, dir, BuildHint)
		}
	}
	return filepath.Abs(dir)
}

// DataTestPlugin is the path of one test plugin of ABI v1.2's pod and node
// data: "pods_on_node.so" (PodsOnNode scores a node by the pods already on
// it) and "pod_data_probe.so" (PodDataProbe reports the data it saw) from
// $SCHEDPLUG_DATA_PLUGIN_DIR or build/host/tests/server/data-plugins.d, and
// the SDK's NodeNumber example, "node_number.so" (C++) and
// "node_number_c.so" (C), from $SCHEDPLUG_EXAMPLE_PLUGIN_DIR or
// build/host/tests/core/examples.d.
func DataTestPlugin(so string) (string, error) {
	env, rel := "SCHEDPLUG_DATA_PLUGIN_DIR", filepath.Join("build", "host", "tests", "server", "data-plugins.d")
	if strings.HasPrefix(so, "node_number") {
		env, rel = "SCHEDPLUG_EXAMPLE_PLUGIN_DIR", filepath.Join("build", "host", "tests", "core", "examples.d")
	}
	dir := os.Getenv(env)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, rel)
	}
	path := filepath.Join(dir, so)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("test plugin %s is missing from %s (%s): %s", so, dir, env, BuildHint)
	}
	return filepath.Abs(path)
}

// RejectsAllPluginDir is a plugin directory holding a DedicatedNodes
// 2.0.0 that rejects every node (plugins/testing/rejects_all.c), from
// $SCHEDPLUG_REJECTS_ALL_PLUGIN_DIR or build/plugins/testing/rejects-all.d.
func RejectsAllPluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_REJECTS_ALL_PLUGIN_DIR", filepath.Join("build", "plugins", "testing", "rejects-all.d"),
		"rejects_all.so", "test plugin", "")
}

// EchoReasonPluginDir is a plugin directory holding EchoReason
// (plugins/testing/echo_reason.c), which echoes a pod's schedplug.io/echo
// annotation into its reason, cut at a byte: $SCHEDPLUG_ECHO_REASON_PLUGIN_DIR
// or build/plugins/testing/echo-reason.d.
func EchoReasonPluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_ECHO_REASON_PLUGIN_DIR", filepath.Join("build", "plugins", "testing", "echo-reason.d"),
		"echo_reason.so", "test plugin", "")
}

// SpotNodesPluginDir is the directory of the Rust sample plugin
// (plugins/spot-nodes, built by cargo through CMake): spot_nodes.so from
// $SCHEDPLUG_SPOT_NODES_PLUGIN_DIR or build/plugins/spot-nodes.d.
func SpotNodesPluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_SPOT_NODES_PLUGIN_DIR", filepath.Join("build", "plugins", "spot-nodes.d"),
		"spot_nodes.so", "the Rust sample", "; it needs cargo when CMake configures")
}

// ShapeFitPluginDir is the directory of the compute-heavy sample plugin
// (plugins/shape-fit, the perf suite's Compute workloads): shape_fit.so
// from $SCHEDPLUG_SHAPE_FIT_PLUGIN_DIR or build/plugins/shape-fit.d.
func ShapeFitPluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_SHAPE_FIT_PLUGIN_DIR", filepath.Join("build", "plugins", "shape-fit.d"),
		"shape_fit.so", "the sample plugin", "")
}

// DeviceSharePluginDir is the directory of the sample plugin that owns
// devices (plugins/device-share: Reserve, Unreserve, PreBind):
// device_share.so from $SCHEDPLUG_DEVICE_SHARE_PLUGIN_DIR or
// build/plugins/device-share.d.
func DeviceSharePluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_DEVICE_SHARE_PLUGIN_DIR", filepath.Join("build", "plugins", "device-share.d"),
		"device_share.so", "the sample plugin", "")
}

// NoHintsPluginDir is the directory of the sample plugins the perf
// suite's Filter+Score workloads without hints load (DedicatedNodes built
// without its hints, and NetworkLatency; plugins/CMakeLists.txt):
// $SCHEDPLUG_NO_HINTS_PLUGIN_DIR or build/plugins/no-hints.d.
func NoHintsPluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_NO_HINTS_PLUGIN_DIR", filepath.Join("build", "plugins", "no-hints.d"),
		"dedicated_nodes.so", "the sample plugins built without hints", "")
}

// ReloadablePluginDir is the directory of the hot-reload test plugin's
// versions (host/tests/server/plugins/reloadable.c): reloadable_v1.so ..
// reloadable_v4.so from $SCHEDPLUG_RELOADABLE_PLUGIN_DIR or
// build/host/tests/server/reloadable-versions.
func ReloadablePluginDir() (string, error) {
	return pluginDirWith("SCHEDPLUG_RELOADABLE_PLUGIN_DIR", filepath.Join("build", "host", "tests", "server", "reloadable-versions"),
		"reloadable_v1.so", "test plugin", "")
}

// pluginDirWith is $env, or rel under the repository root, when it holds
// so; what and note describe so in the error.
func pluginDirWith(env, rel, so, what, note string) (string, error) {
	dir := os.Getenv(env)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, rel)
	}
	if _, err := os.Stat(filepath.Join(dir, so)); err != nil {
		return "", fmt.Errorf("%s %s is missing from %s (%s%s): %s", what, so, dir, env, note, BuildHint)
	}
	return filepath.Abs(dir)
}

// PluginDirOf makes a plugin directory under parent holding copies of the
// given DataTestPlugin files (schedplug-host loads every .so of its
// directory, and NodeNumber comes in two builds of the same name).
func PluginDirOf(parent string, sos ...string) (string, error) {
	dir := filepath.Join(parent, "plugins.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, so := range sos {
		src, err := DataTestPlugin(so)
		if err != nil {
			return "", err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, so), data, 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func binaryFromEnv(env, rel, what string) (string, error) {
	path := os.Getenv(env)
	if path == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		path = filepath.Join(root, rel)
	}
	info, err := os.Stat(path)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s not found or not executable at %s (%s): %s", what, path, env, BuildHint)
	}
	return filepath.Abs(path)
}

var schedulerBuild struct {
	once sync.Once
	path string
	err  error
}

// SchedulerBinary builds integration/scheduler/cmd/kube-scheduler (upstream's command
// plus the schedplug shim) once per process into dir, or uses
// $SCHEDPLUG_SCHEDULER_BIN when set.
func SchedulerBinary(dir string) (string, error) {
	if p := os.Getenv("SCHEDPLUG_SCHEDULER_BIN"); p != "" {
		return binaryFromEnv("SCHEDPLUG_SCHEDULER_BIN", "", "kube-scheduler")
	}
	schedulerBuild.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			schedulerBuild.err = err
			return
		}
		out := filepath.Join(dir, "kube-scheduler")
		cmd := exec.Command("go", "build", "-o", out, "./scheduler/cmd/kube-scheduler")
		cmd.Dir = filepath.Join(root, "integration")
		if msg, err := cmd.CombinedOutput(); err != nil {
			schedulerBuild.err = fmt.Errorf("building integration/scheduler/cmd/kube-scheduler: %v\n%s", err, msg)
			return
		}
		schedulerBuild.path = out
	})
	return schedulerBuild.path, schedulerBuild.err
}

var twinSchedulerBuild struct {
	once sync.Once
	path string
	err  error
}

// TwinSchedulerBinary is the test build of kube-scheduler with the Go twins
// of the sample plugins and TwinCheck compiled in
// (integration/testbed/cmd/kube-scheduler-twin): $SCHEDPLUG_TWIN_SCHEDULER_BIN,
// or built once per process into dir.
func TwinSchedulerBinary(dir string) (string, error) {
	if p := os.Getenv("SCHEDPLUG_TWIN_SCHEDULER_BIN"); p != "" {
		return binaryFromEnv("SCHEDPLUG_TWIN_SCHEDULER_BIN", "", "kube-scheduler (twin build)")
	}
	twinSchedulerBuild.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			twinSchedulerBuild.err = err
			return
		}
		out := filepath.Join(dir, "kube-scheduler-twin")
		cmd := exec.Command("go", "build", "-o", out, "./testbed/cmd/kube-scheduler-twin")
		cmd.Dir = filepath.Join(root, "integration")
		if msg, err := cmd.CombinedOutput(); err != nil {
			twinSchedulerBuild.err = fmt.Errorf("building integration/testbed/cmd/kube-scheduler-twin: %v\n%s", err, msg)
			return
		}
		twinSchedulerBuild.path = out
	})
	return twinSchedulerBuild.path, twinSchedulerBuild.err
}
