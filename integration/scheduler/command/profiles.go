package command

import (
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
			for _, set := range []config.PluginSet{
				pl.MultiPoint, pl.PreEnqueue, pl.QueueSort, pl.PreFilter, pl.Filter, pl.PostFilter,
				pl.PreScore, pl.Score, pl.Reserve, pl.Permit, pl.PreBind, pl.Bind, pl.PostBind,
				pl.PlacementGenerate, pl.PlacementScore, pl.PodGroupPostFilter,
			} {
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
