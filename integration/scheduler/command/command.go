// Package command builds kube-scheduler's command with the schedplug shim:
// upstream's app.NewSchedulerCommand plus one shim plugin per native plugin
// name that the --config profiles enable.
package command

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"schedplug.dev/integration/scheduler/shim"
)

// Extras are Go plugins compiled in beside the shim (the testbed's twin
// build registers the Go twins of the sample plugins this way).
type Extras struct {
	// Plugins are registered as out-of-tree Go plugins; their names are
	// never taken for native ones.
	Plugins map[string]frameworkruntime.PluginFactory
	// WrapNative, when set, wraps the shim's factory of each native plugin.
	WrapNative func(name string, f frameworkruntime.PluginFactory) frameworkruntime.PluginFactory
}

// New is kube-scheduler's command for the arguments `args` (os.Args[1:]):
// every plugin name that a --config profile enables and that is neither an
// in-tree plugin nor one of extras.Plugins is registered as a shim plugin
// served by schedplug-host (address from SCHEDPLUG_HOST). Without --config
// it is plain kube-scheduler.
func New(args []string, extras Extras) *cobra.Command {
	var opts []app.Option
	if file := configFlag(args); file != "" {
		cfg, err := options.LoadConfigFromFile(klog.Background(), file)
		if err != nil {
			// Upstream reads the same file next and reports the problem in
			// its own words; nothing to register meanwhile.
			fmt.Fprintf(os.Stderr, "schedplug: cannot read --config %s to find native plugins: %v\n", file, err)
		} else {
			for name, factory := range NativeRegistry(cfg, extras) {
				opts = append(opts, app.WithPlugin(name, factory))
			}
		}
	}
	for name, factory := range extras.Plugins {
		opts = append(opts, app.WithPlugin(name, factory))
	}
	return app.NewSchedulerCommand(opts...)
}

// NativeRegistry tells the shim the profiles of cfg and returns one shim
// plugin factory per plugin name a profile enables that is neither an
// in-tree plugin nor one of extras.Plugins (served by schedplug-host at
// SCHEDPLUG_HOST). kube-scheduler's command and kube-scheduler-simulate
// register the same set.
func NativeRegistry(cfg *config.KubeSchedulerConfiguration, extras Extras) frameworkruntime.Registry {
	inTree := inTreeNames()
	for name := range extras.Plugins {
		inTree[name] = true
	}
	profiles := nativeProfiles(cfg, inTree)
	shim.SetProfiles(profiles)
	registry := frameworkruntime.Registry{}
	for _, name := range uniqueNames(profiles) {
		factory := frameworkruntime.PluginFactory(shim.Factory(name))
		if extras.WrapNative != nil {
			factory = extras.WrapNative(name, factory)
		}
		registry[name] = factory
	}
	return registry
}
