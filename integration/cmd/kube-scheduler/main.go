// Command kube-scheduler is the upstream kube-scheduler with the schedplug
// shim compiled in: every plugin name that the --config profiles enable and
// that is not an in-tree plugin is registered as a shim plugin served by
// schedplug-host (address from SCHEDPLUG_HOST).
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"schedplug.dev/integration/shim"
)

// Test builds (go build -tags schedplug_twin, see twin.go) register extra
// Go plugins and wrap the shim's factories; the normal build has neither.
var (
	testPlugins map[string]frameworkruntime.PluginFactory
	wrapNative  = func(_ string, f frameworkruntime.PluginFactory) frameworkruntime.PluginFactory { return f }
)

func main() {
	var opts []app.Option
	if file := configFlag(os.Args[1:]); file != "" {
		cfg, err := options.LoadConfigFromFile(klog.Background(), file)
		if err != nil {
			// Upstream reads the same file next and reports the problem in
			// its own words; nothing to register meanwhile.
			fmt.Fprintf(os.Stderr, "schedplug: cannot read --config %s to find native plugins: %v\n", file, err)
		} else {
			inTree := inTreeNames()
			for name := range testPlugins {
				inTree[name] = true
			}
			profiles := nativeProfiles(cfg, inTree)
			shim.SetProfiles(profiles)
			for _, name := range uniqueNames(profiles) {
				opts = append(opts, app.WithPlugin(name, wrapNative(name, shim.Factory(name))))
			}
		}
	}
	for name, factory := range testPlugins {
		opts = append(opts, app.WithPlugin(name, factory))
	}
	command := app.NewSchedulerCommand(opts...)
	os.Exit(cli.Run(command))
}
