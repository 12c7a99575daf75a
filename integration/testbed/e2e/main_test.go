// Package e2e runs schedplug end to end: a real kube-apiserver (upstream's
// in-process test server) on an embedded etcd, schedplug-host with the
// sample plugins, and kube-scheduler built from cmd/kube-scheduler, each
// test with its own apiserver, host and scheduler. See docs/e2e.md.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"schedplug.dev/integration/testbed/testenv"
)

// shared is set up once per `go test` run.
var shared struct {
	dir  string // holds etcd's data and the built kube-scheduler
	etcd *testenv.Etcd
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "schedplug-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	shared.dir = dir
	etcd, err := testenv.StartEtcd(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer etcd.Stop()
	shared.etcd = etcd
	return m.Run()
}
