// schedplug-image builds the schedplug images as OCI archives from a build
// tree, with no registry and no container daemon:
//
//	schedplug-image --host build/host/schedplug-host --cli build/tools/schedplug/schedplug \
//	  --scheduler build/go/kube-scheduler --plugins build/plugins.d \
//	  --version 0.1.0 --scheduler-version v1.37.2 --revision $(git rev-parse HEAD) \
//	  --created $(git log -1 --format=%ct) -o build/images \
//	  [--minor-scheduler v1.36.3=build/go/kube-scheduler-1.36 ...]
//
// It prints one line per image: name, digest, archive size.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"schedplug.dev/deploy/image"
)

func main() {
	var in image.Inputs
	var created, out string
	flag.StringVar(&in.HostBin, "host", "", "schedplug-host binary")
	flag.StringVar(&in.CLIBin, "cli", "", "schedplug CLI binary")
	flag.StringVar(&in.SchedulerBin, "scheduler", "", "kube-scheduler with the shim, built with CGO_ENABLED=0")
	flag.StringVar(&in.PluginDir, "plugins", "", "directory of plugin .so files for the bundle image")
	flag.StringVar(&in.Version, "version", "", "schedplug version (CMakeLists.txt project version)")
	flag.StringVar(&in.SchedulerVersion, "scheduler-version", "", "Kubernetes version kube-scheduler is built from")
	flag.StringVar(&in.Revision, "revision", "", "source revision (git commit)")
	flag.StringVar(&in.Source, "source", "", "source repository URL")
	flag.StringVar(&in.Repository, "repository", "", "image name prefix (default localhost/schedplug)")
	flag.StringVar(&created, "created", os.Getenv("SOURCE_DATE_EPOCH"), "creation time, Unix seconds (default $SOURCE_DATE_EPOCH)")
	flag.StringVar(&out, "o", "", "output directory for the .oci.tar archives")
	flag.Func("minor-scheduler", "VERSION=BIN: kube-scheduler built for another Kubernetes minor, one more image (repeatable)", func(v string) error {
		version, bin, ok := strings.Cut(v, "=")
		if !ok || version == "" || bin == "" {
			return fmt.Errorf("want VERSION=BIN (v1.36.3=build/go/kube-scheduler-1.36), got %q", v)
		}
		in.Minors = append(in.Minors, image.MinorScheduler{Bin: bin, Version: version})
		return nil
	})
	flag.Parse()
	for name, v := range map[string]string{"--host": in.HostBin, "--cli": in.CLIBin, "--scheduler": in.SchedulerBin,
		"--plugins": in.PluginDir, "--version": in.Version, "--scheduler-version": in.SchedulerVersion,
		"--revision": in.Revision, "--created": created, "-o": out} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "schedplug-image: %s is required (see -h)\n", name)
			os.Exit(2)
		}
	}
	secs, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "schedplug-image: --created %q is not Unix seconds\n", created)
		os.Exit(2)
	}
	in.Created = time.Unix(secs, 0)
	work, err := os.MkdirTemp("", "schedplug-image-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedplug-image:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(work)
	in.WorkDir = work
	results, err := image.BuildAll(in, out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedplug-image:", err)
		os.RemoveAll(work)
		os.Exit(1)
	}
	for _, r := range results {
		fmt.Printf("%s %s %s %d bytes\n", r.File, r.Name, r.Digest, r.Size)
	}
}
