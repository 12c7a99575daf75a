//go:build schedplug_twin

package main

import (
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"schedplug.dev/integration/internal/twin"
)

// The differential test's build: the Go twins of the sample plugins and
// TwinCheck are registered, and every shim plugin instance is remembered so
// TwinCheck can ask it directly (integration/internal/twin, docs/e2e.md).
func init() {
	testPlugins = map[string]frameworkruntime.PluginFactory{}
	for name, f := range twin.Registry() {
		testPlugins[name] = f
	}
	wrapNative = func(name string, f frameworkruntime.PluginFactory) frameworkruntime.PluginFactory {
		return twin.Remember(name, f)
	}
}
