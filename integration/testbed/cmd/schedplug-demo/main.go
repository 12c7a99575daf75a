// schedplug-demo runs schedplug end to end on one machine: an in-process
// etcd and kube-apiserver, schedplug-host with the sample plugins, and
// kube-scheduler with the shim as child processes. It creates six nodes
// and a few pods, prints where each pod went (or why it is Pending), and
// shuts everything down. tools/dev/demo.sh builds everything and runs it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"schedplug.dev/integration/testbed/testenv"
)

// options are the demo's flags.
type options struct {
	configDir string // holds the default scheduler-config.yaml and latency.txt
	config    string // scheduler configuration template; "" for configDir's
	plugins   string // plugin directory; "" for the sample plugins' build
	nodes     string // nodes YAML; "" for the six demo nodes
	pods      string // pods YAML; "" for the demo pods
	keepLogs  string
	timeout   time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.configDir, "config-dir", "", "`DIR` with the default scheduler-config.yaml and the sample latency.txt (default: <repo>/config/demo)")
	flag.StringVar(&o.config, "config", "", "a KubeSchedulerConfiguration `FILE` for both kube-scheduler and schedplug-host; ${KUBECONFIG} becomes the demo apiserver's kubeconfig (without it, clientConnection.kubeconfig is set to it), ${LATENCY_FILE} a copy of the sample latency.txt (default: <config-dir>/scheduler-config.yaml)")
	flag.StringVar(&o.plugins, "plugins", "", "`DIR` of plugin .so files for schedplug-host (default: $SCHEDPLUG_PLUGIN_DIR or build/plugins.d, with the three sample plugins)")
	flag.StringVar(&o.nodes, "nodes", "", "`FILE` of nodes to create: YAML Node objects, a List of them, or 'kubectl get nodes -o yaml' output; they need status.allocatable (default: the six demo nodes)")
	flag.StringVar(&o.pods, "pods", "", "`FILE` of pods to create, in the same forms; pods with spec.nodeName start bound, the others are scheduled (default: the demo pods)")
	flag.StringVar(&o.keepLogs, "keep-logs", "", "copy the logs of every component into `DIR` before exiting")
	flag.DurationVar(&o.timeout, "timeout", 90*time.Second, "how long to wait for the pods to settle")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: schedplug-demo [flags]\n\n"+
			"Runs etcd and kube-apiserver in this process, schedplug-host and kube-scheduler (with the shim) as\n"+
			"child processes, creates nodes and pods, and prints where each pod went or why it is Pending.\n"+
			"With no flags: the sample plugins, six demo nodes and six demo pods. Flags (one or two dashes):\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	// Our own messages go to the terminal's stderr (term); whatever else
	// writes to stderr (the in-process apiserver's etcd client, for one)
	// goes to the apiserver log, so the result tables stay last.
	term := os.Stderr
	if fd, err := syscall.Dup(int(os.Stderr.Fd())); err == nil {
		term = os.NewFile(uintptr(fd), "/dev/stderr")
		// A crash still reaches the terminal, not only the log.
		_ = debug.SetCrashOutput(term, debug.CrashOptions{})
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	result, err := run(ctx, term, o)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(term, "schedplug-demo: interrupted; everything it started was shut down")
			os.Exit(130)
		}
		fmt.Fprintln(term, "schedplug-demo:", err)
		os.Exit(1)
	}
	// Everything is shut down by now: the tables are the last lines printed.
	os.Stdout.Write(result)
}

// run starts everything, schedules the demo pods, shuts everything down and
// returns the result tables; term is the terminal for error messages.
func run(ctx context.Context, term *os.File, o options) (result []byte, err error) {
	configDir, keepLogs, timeout := o.configDir, o.keepLogs, o.timeout
	if configDir == "" {
		root, err := testenv.RepoRoot()
		if err != nil {
			return nil, err
		}
		configDir = filepath.Join(root, "config", "demo")
	}
	configTemplate := o.config
	if configTemplate == "" {
		configTemplate = filepath.Join(configDir, "scheduler-config.yaml")
	}
	cluster, err := loadCluster(o.nodes, o.pods)
	if err != nil {
		return nil, err
	}
	hostBin, err := testenv.HostBinary()
	if err != nil {
		return nil, err
	}
	pluginDir := o.plugins
	if pluginDir == "" {
		if pluginDir, err = testenv.PluginDir(); err != nil {
			return nil, err
		}
	} else if info, err := os.Stat(pluginDir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("-plugins %s: not a directory of plugin .so files; build your plugins into one and pass its path", pluginDir)
	} else if pluginDir, err = filepath.Abs(pluginDir); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "schedplug-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer func() {
		if keepLogs != "" {
			copyLogs(work, keepLogs)
		}
	}()
	schedBin, err := testenv.SchedulerBinary(work)
	if err != nil {
		return nil, err
	}

	// The in-process apiserver logs a lot; keep it in a file.
	apiLog, err := os.Create(filepath.Join(work, "apiserver.log"))
	if err != nil {
		return nil, err
	}
	defer apiLog.Close()
	quietKlog(apiLog)
	if term != os.Stderr {
		if err := syscall.Dup3(int(apiLog.Fd()), int(os.Stderr.Fd()), 0); err != nil {
			return nil, fmt.Errorf("sending stderr to %s: %w", apiLog.Name(), err)
		}
	}

	step := stepPrinter(time.Now())
	step("starting etcd and kube-apiserver (in this process)")
	etcd, err := testenv.StartEtcd(work)
	if err != nil {
		return nil, err
	}
	defer etcd.Stop()
	tb := testenv.NewLogTB("apiserver", apiLog, work)
	defer tb.Close()
	cp, err := testenv.StartControlPlane(tb, etcd, work)
	if err != nil {
		return nil, err
	}
	defer func() {
		step("stopping kube-apiserver and etcd")
		cp.Stop()
	}()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	step(fmt.Sprintf("creating %d nodes%s", len(cluster.nodes), boundPods(cluster)))
	if err := createNodes(ctx, cp, cluster); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	configFile, latencyFile, err := writeDemoConfig(configTemplate, configDir, work, cp.Kubeconfig)
	if err != nil {
		return nil, err
	}
	step("starting schedplug-host (plugins from " + pluginDir + ")")
	host := testenv.NewHost(hostBin, pluginDir, configFile, work, filepath.Join(work, "host.log"))
	if err := host.StartAndWait(30 * time.Second); err != nil {
		return nil, err
	}
	defer func() {
		step("stopping schedplug-host")
		host.Stop(10 * time.Second)
	}()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	step("starting kube-scheduler with the schedplug shim")
	sched, err := testenv.NewScheduler(schedBin, configFile, cp.Kubeconfig, host.Address, filepath.Join(work, "scheduler-certs"), filepath.Join(work, "scheduler.log"))
	if err != nil {
		return nil, err
	}
	if err := sched.StartAndWait(60 * time.Second); err != nil {
		return nil, err
	}
	defer func() {
		step("stopping kube-scheduler")
		sched.Stop(10 * time.Second)
	}()

	var latencies map[string]string
	if latencyFile != "" {
		if latencies, err = readLatencies(latencyFile); err != nil {
			return nil, err
		}
	}
	step(fmt.Sprintf("creating %d pod(s) to schedule", len(cluster.scheduled)))
	if err := createPods(ctx, cp, cluster, false); err != nil {
		return nil, err
	}
	step("waiting for the scheduler (pods that cannot fit stay Pending)")
	rows, err := settle(ctx, cp, cluster, timeout)
	if err != nil {
		return nil, err
	}
	if !sched.Running() {
		return nil, fmt.Errorf("kube-scheduler exited during the demo: %v (log: %s)", sched.ExitError(), sched.LogFile)
	}
	var out bytes.Buffer
	fmt.Fprintln(&out)
	printNodes(&out, cluster, latencies)
	fmt.Fprintln(&out)
	printTable(&out, rows)
	fmt.Fprintln(&out)
	if err := printWhy(&out, host.Address, cluster, rows); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// quietKlog sends every klog line (errors too) to w instead of stderr.
func quietKlog(w *os.File) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{
		"logtostderr": "false", "alsologtostderr": "false",
		"stderrthreshold": "FATAL", "legacy_stderr_threshold_behavior": "false",
	} {
		_ = fs.Set(name, value) // older klog versions lack some flags
	}
	klog.SetOutput(w)
}

// stepPrinter prints one progress line per step with the elapsed time,
// counted from $SCHEDPLUG_T0 (Unix seconds, set by tools/dev/demo.sh) when
// set, so the clock continues from the build steps, else from start.
func stepPrinter(start time.Time) func(string) {
	if t0, err := strconv.ParseInt(os.Getenv("SCHEDPLUG_T0"), 10, 64); err == nil {
		start = time.Unix(t0, 0)
	}
	return func(msg string) {
		s := int(time.Since(start).Seconds())
		fmt.Printf("[%5s] %s\n", fmt.Sprintf("%d:%02d", s/60, s%60), msg)
	}
}

// writeDemoConfig writes the scheduler configuration `template` with
// ${KUBECONFIG} and ${LATENCY_FILE} filled in. Only a configuration that
// uses ${LATENCY_FILE} (NetworkLatency with the sample figures) gets a copy
// of configDir's latency.txt; latencyFile is "" otherwise.
func writeDemoConfig(template, configDir, work, kubeconfig string) (configFile, latencyFile string, err error) {
	tmpl, err := os.ReadFile(template)
	if err != nil {
		return "", "", fmt.Errorf("reading the scheduler configuration: %w", err)
	}
	if strings.Contains(string(tmpl), "${LATENCY_FILE}") {
		latency, err := os.ReadFile(filepath.Join(configDir, "latency.txt"))
		if err != nil {
			return "", "", fmt.Errorf("reading the sample latency figures for ${LATENCY_FILE} in %s: %w", template, err)
		}
		latencyFile = filepath.Join(work, "latency.txt")
		if err := os.WriteFile(latencyFile, latency, 0o644); err != nil {
			return "", "", err
		}
	}
	vars := map[string]string{"KUBECONFIG": kubeconfig, "LATENCY_FILE": latencyFile}
	var missing []string
	text := os.Expand(string(tmpl), func(v string) string {
		if val, ok := vars[v]; ok {
			return val
		}
		missing = append(missing, v)
		return ""
	})
	if len(missing) > 0 {
		return "", "", fmt.Errorf("%s uses unknown variables %s (only ${KUBECONFIG} and ${LATENCY_FILE} exist)", template, strings.Join(missing, ", "))
	}
	if !strings.Contains(string(tmpl), "${KUBECONFIG}") {
		// A configuration written for a real cluster: point it at the demo
		// apiserver, the only scheduler there (no leader election).
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil || doc == nil {
			return "", "", fmt.Errorf("%s is not a KubeSchedulerConfiguration in YAML: %v", template, err)
		}
		conn, _ := doc["clientConnection"].(map[string]any)
		if conn == nil {
			conn = map[string]any{}
		}
		conn["kubeconfig"] = kubeconfig
		doc["clientConnection"] = conn
		doc["leaderElection"] = map[string]any{"leaderElect": false}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return "", "", err
		}
		text = string(out)
	}
	configFile = filepath.Join(work, "scheduler-config.yaml")
	return configFile, latencyFile, os.WriteFile(configFile, []byte(text), 0o644)
}

func copyLogs(work, dest string) {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		fmt.Println("schedplug-demo: keeping logs:", err)
		return
	}
	for _, name := range []string{"apiserver.log", "host.log", "scheduler.log", "scheduler-config.yaml", "latency.txt"} {
		if data, err := os.ReadFile(filepath.Join(work, name)); err == nil {
			_ = os.WriteFile(filepath.Join(dest, name), data, 0o644)
		}
	}
	fmt.Println("schedplug-demo: component logs kept in", dest)
}
