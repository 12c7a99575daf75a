// Command kube-scheduler-twin is the differential test's build of
// kube-scheduler (docs/e2e.md): the shipped command, plus the Go twins of
// the sample plugins and TwinCheck, with every shim plugin instance
// remembered so that TwinCheck can ask it directly (testbed/twin).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration

	"schedplug.dev/integration/scheduler/command"
	"schedplug.dev/integration/testbed/twin"
)

func main() {
	os.Exit(cli.Run(command.New(os.Args[1:], command.Extras{Plugins: twin.Registry(), WrapNative: twin.Remember})))
}
