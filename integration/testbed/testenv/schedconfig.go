package testenv

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// NativePlugin is one schedplug plugin enabled in the test profile.
type NativePlugin struct {
	Name   string
	Weight int32          // score weight; 0 leaves kube-scheduler's default
	Args   map[string]any // the plugin's own args
	// Shim settings (pluginConfig args key "schedplug"); empty keeps the
	// shim's defaults.
	FailurePolicy string // "Fail" or "Ignore"
	Timeout       string // e.g. "200ms"
	// SimulatorAnnotations turns on the profile's simulator annotations
	// (docs/simulator-annotations.md).
	SimulatorAnnotations bool
}

// SchedulerConfig renders a KubeSchedulerConfiguration with one profile
// that keeps every in-tree plugin and adds the native ones under multiPoint.
// kube-scheduler and schedplug-host read the same file.
type SchedulerConfig struct {
	SchedulerName string // default "default-scheduler"
	Kubeconfig    string
	Plugins       []NativePlugin
	// FilterFirst names plugins (also listed in Plugins) that are enabled
	// at filter: as well, which puts them before every other Filter.
	FilterFirst []string
	// ClientQPS raises kube-scheduler's API client rate limit (default 50
	// QPS, burst 100) to this, burst twice as much; 0 keeps the default.
	ClientQPS float32
	// PercentageOfNodesToScore is the profile's; 0 keeps the adaptive
	// default.
	PercentageOfNodesToScore int32
	// NoDefaultSpread turns PodTopologySpread's default constraints off,
	// as upstream's batching scenarios do: with them no pod is signable
	// and kube-scheduler's opportunistic batching never applies.
	NoDefaultSpread bool
}

// YAML renders the configuration.
func (c SchedulerConfig) YAML() ([]byte, error) {
	name := c.SchedulerName
	if name == "" {
		name = "default-scheduler"
	}
	var enabled, pluginConfig []map[string]any
	for _, p := range c.Plugins {
		e := map[string]any{"name": p.Name}
		if p.Weight != 0 {
			e["weight"] = p.Weight
		}
		enabled = append(enabled, e)
		args := map[string]any{}
		for k, v := range p.Args {
			args[k] = v
		}
		shim := map[string]any{}
		if p.FailurePolicy != "" {
			shim["failurePolicy"] = p.FailurePolicy
		}
		if p.Timeout != "" {
			shim["timeout"] = p.Timeout
		}
		if p.SimulatorAnnotations {
			shim["simulatorAnnotations"] = true
		}
		if len(shim) > 0 {
			args["schedplug"] = shim
		}
		if len(args) > 0 {
			pluginConfig = append(pluginConfig, map[string]any{"name": p.Name, "args": args})
		}
	}
	if c.NoDefaultSpread {
		pluginConfig = append(pluginConfig, map[string]any{"name": "PodTopologySpread",
			"args": map[string]any{"defaultingType": "List", "defaultConstraints": []any{}}})
	}
	points := map[string]any{"multiPoint": map[string]any{"enabled": enabled}}
	if len(c.FilterFirst) > 0 {
		var first []map[string]any
		for _, n := range c.FilterFirst {
			first = append(first, map[string]any{"name": n})
		}
		points["filter"] = map[string]any{"enabled": first}
	}
	profile := map[string]any{
		"schedulerName": name,
		"plugins":       points,
	}
	if c.PercentageOfNodesToScore > 0 {
		profile["percentageOfNodesToScore"] = c.PercentageOfNodesToScore
	}
	if len(pluginConfig) > 0 {
		profile["pluginConfig"] = pluginConfig
	}
	conn := map[string]any{"kubeconfig": c.Kubeconfig}
	if c.ClientQPS > 0 {
		conn["qps"] = c.ClientQPS
		conn["burst"] = int(2 * c.ClientQPS)
	}
	doc := map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": conn,
		// One scheduler per test apiserver: no lease to wait for.
		"leaderElection": map[string]any{"leaderElect": false},
		"profiles":       []any{profile},
	}
	return yaml.Marshal(doc)
}

// WriteFile renders the configuration into file.
func (c SchedulerConfig) WriteFile(file string) error {
	data, err := c.YAML()
	if err != nil {
		return fmt.Errorf("rendering the scheduler configuration: %w", err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("writing the scheduler configuration %s: %w", file, err)
	}
	return nil
}
