package shim

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// PluginConfig is what kube-scheduler read for one native plugin of a
// profile. The Handshake sends it so that schedplug-host can check that it
// read the same KubeSchedulerConfiguration (the config-skew check,
// docs/protocol.md): a host sidecar that restarted after its ConfigMap
// changed would otherwise run other args, weights or policies than
// kube-scheduler without anyone noticing.
type PluginConfig struct {
	Name string
	// Weight is the Score weight kube-scheduler gives the plugin
	// (upstream's getScoreWeights): its entry in the score list, else its
	// multiPoint entry, a weight of 0 or none meaning 1; 0 when neither
	// list enables it.
	Weight int32
	// Args are the plugin's pluginConfig args as kube-scheduler decoded
	// them (*runtime.Unknown holding JSON); nil when it has none.
	Args runtime.Object
}

// PluginConfigs is what profile `prof` of kube-scheduler's decoded
// configuration says about each of its native plugins `names`.
func PluginConfigs(prof *config.KubeSchedulerProfile, names []string) []PluginConfig {
	out := make([]PluginConfig, 0, len(names))
	for _, name := range names {
		pc := PluginConfig{Name: name}
		if prof.Plugins != nil {
		weights:
			for _, set := range []config.PluginSet{prof.Plugins.Score, prof.Plugins.MultiPoint} {
				for _, e := range set.Enabled {
					if e.Name == name {
						pc.Weight = e.Weight
						if pc.Weight == 0 {
							pc.Weight = 1
						}
						break weights
					}
				}
			}
		}
		for _, c := range prof.PluginConfig {
			if c.Name == name {
				pc.Args = c.Args
			}
		}
		out = append(out, pc)
	}
	return out
}

// settings is pc as the Handshake carries it.
func (pc PluginConfig) settings() (*pb.PluginSettings, error) {
	pol, err := ParseArgs(pc.Name, pc.Args)
	if err != nil {
		return nil, err
	}
	raw, err := rawArgs(pc.Name, pc.Args)
	if err != nil {
		return nil, err
	}
	s := &pb.PluginSettings{Name: pc.Name, Weight: pc.Weight, ArgsJson: string(raw), FailurePolicy: string(pol.FailurePolicy)}
	// The timeout only when the args set one (the host knows no default).
	var top struct {
		Schedplug struct {
			Timeout *string `json:"timeout"`
		} `json:"schedplug"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &top); err != nil {
			return nil, fmt.Errorf("plugin %q: pluginConfig args: %w", pc.Name, err)
		}
	}
	if top.Schedplug.Timeout != nil {
		s.TimeoutMs = int64(pol.Timeout / time.Millisecond)
	}
	return s, nil
}
