// schedplug-dryrun starts etcd and a real kube-apiserver in this process
// (testbed/testenv, as the end-to-end tests do) and applies every object of
// the given YAML files with a server-side dry run. A ConfigMap key named
// scheduler-config.yaml must also load and validate as kube-scheduler's
// configuration. For checks of rendered output that live outside this Go
// module (the Helm chart's test in deploy/):
//
//	schedplug-dryrun FILE.yaml...
//
// It prints one line per object and exits 1 if any was refused.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"schedplug.dev/integration/testbed/testenv"
)

func main() {
	logFile := flag.String("log", "", "file for the apiserver's log (default: discarded)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: schedplug-dryrun [--log FILE] FILE.yaml...")
		os.Exit(2)
	}
	refused, err := run(*logFile, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedplug-dryrun:", err)
		os.Exit(1)
	}
	if refused > 0 {
		fmt.Printf("%d object(s) refused\n", refused)
		os.Exit(1)
	}
}

func run(logFile string, files []string) (int, error) {
	var logOut io.Writer = io.Discard
	if logFile != "" {
		f, err := os.Create(logFile)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		logOut = f
	}
	klog.SetOutput(logOut)
	klog.LogToStderr(false)
	work, err := os.MkdirTemp("", "schedplug-dryrun-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	etcd, err := testenv.StartEtcd(work)
	if err != nil {
		return 0, err
	}
	defer etcd.Stop()
	tb := testenv.NewLogTB("apiserver", logOut, work)
	defer tb.Close()
	cp, err := testenv.StartControlPlane(tb, etcd, work)
	if err != nil {
		return 0, err
	}
	defer cp.Stop()
	dryRun, err := testenv.NewDryRunner(cp.Config)
	if err != nil {
		return 0, err
	}
	refused := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return refused, err
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			return refused, fmt.Errorf("%s: %w", file, err)
		}
		for _, obj := range objs {
			where := fmt.Sprintf("%s: %s %s/%s", filepath.Base(file), obj.GetKind(), obj.GetNamespace(), obj.GetName())
			err := dryRun.Apply(context.Background(), obj)
			if err == nil && obj.GetKind() == "ConfigMap" {
				err = checkSchedulerConfig(obj, work)
			}
			if err != nil {
				refused++
				fmt.Printf("%s: REFUSED: %v\n", where, err)
			} else {
				fmt.Printf("%s: accepted\n", where)
			}
		}
	}
	return refused, nil
}

// checkSchedulerConfig loads and validates a scheduler-config.yaml key the
// way kube-scheduler does at start.
func checkSchedulerConfig(obj *unstructured.Unstructured, work string) error {
	text, found, _ := unstructured.NestedString(obj.Object, "data", "scheduler-config.yaml")
	if !found {
		return nil
	}
	file := filepath.Join(work, "scheduler-config.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return err
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), file)
	if err != nil {
		return fmt.Errorf("kube-scheduler cannot load its scheduler-config.yaml: %w", err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return fmt.Errorf("kube-scheduler rejects its scheduler-config.yaml: %w", err)
	}
	return nil
}
