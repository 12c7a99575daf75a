package command

import (
	"reflect"
	"strings"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"

	"schedplug.dev/integration/scheduler/shim"
)

// configFlag finds the value of --config (or -config) the way pflag
// accepts it: "--config FILE" or "--config=FILE". The last one wins.
func configFlag(args []string) string {
	file := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasValue {
			file = value
		} else if i+1 < len(args) {
			file = args[i+1]
			i++
		}
	}
	return file
}

// inTreeNames are the plugins upstream registers itself.
func inTreeNames() map[string]bool {
	names := map[string]bool{}
	for n := range plugins.NewInTreeRegistry() {
		names[n] = true
	}
	return names
}

// nativeProfiles lists, per profile, the enabled plugin names that are not
// in-tree, in the order the profile runs them (multiPoint first, then the
// individual extension points).
func nativeProfiles(cfg *config.KubeSchedulerConfiguration, inTree map[string]bool) []shim.Profile {
	var out []shim.Profile
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		p := shim.Profile{SchedulerName: prof.SchedulerName}
		if prof.Plugins != nil {
			seen := map[string]bool{}
			pl := prof.Plugins
			for _, set := range extensionPoints(pl) {
				for _, e := range set.Enabled {
					if inTree[e.Name] || seen[e.Name] || e.Name == "*" {
						continue
					}
					seen[e.Name] = true
					p.Plugins = append(p.Plugins, e.Name)
				}
			}
		}
		// What kube-scheduler read for them, for the host's config-skew
		// check in the Handshake.
		p.Configs = shim.PluginConfigs(prof, p.Plugins)
		out = append(out, p)
	}
	return out
}

// extensionPoints is a profile's plugin sets: multiPoint first, then every
// extension point in the order kube-scheduler declares them. Read by
// reflection, so the points a minor adds (1.36's placementGenerate and
// placementScore, 1.37's podGroupPostFilter, 1.38's placementFeasible)
// count on each minor without a file per minor.
func extensionPoints(pl *config.Plugins) []config.PluginSet {
	out := []config.PluginSet{pl.MultiPoint}
	v := reflect.ValueOf(pl).Elem()
	for i := range v.NumField() {
		if set, ok := v.Field(i).Interface().(config.PluginSet); ok && v.Type().Field(i).Name != "MultiPoint" {
			out = append(out, set)
		}
	}
	return out
}

// uniqueNames is every native name of every profile, once.
func uniqueNames(profiles []shim.Profile) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range profiles {
		for _, n := range p.Plugins {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
