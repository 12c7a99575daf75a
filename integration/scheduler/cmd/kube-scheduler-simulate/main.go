// Command kube-scheduler-simulate runs the kube-scheduler this repository
// ships (upstream's, its in-tree plugins and the shim's native plugins,
// served by schedplug-host at SCHEDPLUG_HOST) on kubectl dumps of nodes
// and pods, against an in-memory API instead of a cluster, and prints
// where each pending pod goes, or why it waits, as JSON. `schedplug
// simulate` starts a host and runs it (docs/simulate.md).
//
//	kube-scheduler-simulate --config FILE --nodes NODES.yaml --pods PODS.yaml [--explain POD]... [--timeout 10m]
//
// Exit status: 0 the simulation ran (the JSON says what happened to each
// pod), 1 it could not run or finish, 2 a file is unusable.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"schedplug.dev/integration/scheduler/simulate"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o simulate.Options
	var explain list
	verbose := flag.Int("v", 0, "kube-scheduler's log verbosity on stderr (0: none; what it reports is in the JSON)")
	flag.StringVar(&o.Config, "config", "", "the KubeSchedulerConfiguration `FILE` (the one schedplug-host at SCHEDPLUG_HOST serves)")
	flag.StringVar(&o.Nodes, "nodes", "", "`kubectl get nodes -o yaml` output")
	flag.StringVar(&o.Pods, "pods", "", "`kubectl get pods -A -o yaml` output; pods without spec.nodeName are scheduled")
	flag.Var(&explain, "explain", "`POD` (namespace/name, repeatable, '*' for all) whose last cycle to report node by node")
	flag.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "how long the simulation may take")
	flag.Parse()
	o.Explain = explain
	if o.Config == "" || o.Nodes == "" || o.Pods == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "kube-scheduler-simulate: give --config, --nodes and --pods (and no other arguments); `schedplug simulate` runs it for you")
		os.Exit(2)
	}
	logs(*verbose)

	result, err := simulate.Run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-scheduler-simulate:", err)
		if errors.As(err, &simulate.InputError{}) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	if err := out.Encode(result); err != nil {
		fmt.Fprintln(os.Stderr, "kube-scheduler-simulate:", err)
		os.Exit(1)
	}
}

// logs keeps kube-scheduler's log off stderr unless -v asks for it: what
// it reports about the pods (a plugin's error, a FailedScheduling message)
// is in the JSON.
func logs(verbosity int) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", fmt.Sprint(verbosity))
	if verbosity == 0 {
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
}
