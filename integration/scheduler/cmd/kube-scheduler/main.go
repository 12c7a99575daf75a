// Command kube-scheduler is the upstream kube-scheduler with the schedplug
// shim compiled in: every plugin name that the --config profiles enable and
// that is not an in-tree plugin is registered as a shim plugin served by
// schedplug-host (address from SCHEDPLUG_HOST).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration

	"schedplug.dev/integration/scheduler/command"
)

func main() {
	os.Exit(cli.Run(command.New(os.Args[1:], command.Extras{})))
}
