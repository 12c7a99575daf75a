package shim

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Profile is one scheduler profile and the native plugin names it enables,
// in the order the profile runs them.
type Profile struct {
	SchedulerName string
	Plugins       []string
	// Configs are what kube-scheduler read for each of Plugins (weights,
	// args, policies); the Handshake sends them for the host's config-skew
	// check. Empty: not sent, the host does not compare this profile.
	Configs []PluginConfig
}

// registry is what the shim's plugins registered: the profiles with their
// native plugins (the Handshake names them all) and each plugin's policy.
// It is the cycles' cycle.Policies.
type registry struct {
	mu        sync.RWMutex
	profiles  []Profile
	policies  map[string]map[string]Policy // profile -> plugin -> policy
	activator fwk.PodActivator
	// handles: each profile's framework handle (its waiting pods).
	handles map[string]fwk.Handle
	// annotations: each profile's simulatorAnnotations setting
	// (annotations.go).
	annotations map[string]*annotationSetting
}

func newRegistry(profiles []Profile) *registry {
	r := &registry{policies: map[string]map[string]Policy{}, handles: map[string]fwk.Handle{}, annotations: map[string]*annotationSetting{}}
	for _, p := range profiles {
		r.profiles = append(r.profiles, Profile{SchedulerName: p.SchedulerName, Plugins: append([]string(nil), p.Plugins...), Configs: append([]PluginConfig(nil), p.Configs...)})
	}
	return r
}

// register notes a plugin instance: its policy decides call timeouts and
// failure handling, and a plugin no configured profile lists is added to
// the Handshake.
func (r *registry) register(profile, plugin string, pol Policy, activator fwk.PodActivator) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.policies[profile] == nil {
		r.policies[profile] = map[string]Policy{}
	}
	r.policies[profile][plugin] = pol
	r.noteAnnotations(profile, plugin, pol.SimulatorAnnotations)
	if r.activator == nil && activator != nil {
		r.activator = activator
	}
	for i := range r.profiles {
		if r.profiles[i].SchedulerName != profile {
			continue
		}
		for _, n := range r.profiles[i].Plugins {
			if n == plugin {
				return
			}
		}
		r.profiles[i].Plugins = append(r.profiles[i].Plugins, plugin)
		// Its settings are unknown here: the profile's are incomplete and
		// no longer sent (the host then skips its config-skew check).
		r.profiles[i].Configs = nil
		return
	}
	r.profiles = append(r.profiles, Profile{SchedulerName: profile, Plugins: []string{plugin}})
}

// CallTimeout is the deadline of the one call that serves all of a
// profile's native plugins: the largest of their timeouts.
func (r *registry) CallTimeout(profile string) time.Duration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var d time.Duration
	for _, p := range r.policies[profile] {
		d = max(d, p.Timeout)
	}
	if d == 0 {
		d = DefaultTimeout
	}
	return d
}

// PluginTimeout is the plugin's own deadline.
func (r *registry) PluginTimeout(profile, plugin string) time.Duration {
	return r.policy(profile, plugin).Timeout
}

func (r *registry) policy(profile, plugin string) Policy {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if p, ok := r.policies[profile][plugin]; ok {
		return p
	}
	return DefaultPolicy()
}

// Plugins are the profile's native plugins, in profile order. The slice
// is shared: callers do not change it.
func (r *registry) Plugins(profile string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for i := range r.profiles {
		if r.profiles[i].SchedulerName == profile {
			return r.profiles[i].Plugins
		}
	}
	return nil
}

// noteHandle notes the framework handle of a profile.
func (r *registry) noteHandle(profile string, h fwk.Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handles[profile] == nil {
		r.handles[profile] = h
	}
}

// handle is the profile's framework handle (nil: none registered).
func (r *registry) handle(profile string) fwk.Handle {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.handles[profile]
}

func (r *registry) podActivator() fwk.PodActivator {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.activator
}

// handshake is the Handshake request naming every profile and its native
// plugins, with their settings for the host's config-skew check.
func (r *registry) handshake(ctx context.Context, clientID string) *pb.HandshakeRequest {
	r.mu.RLock()
	defer r.mu.RUnlock()
	req := &pb.HandshakeRequest{ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1, ClientId: clientID}
	for _, p := range r.profiles {
		pp := &pb.ProfilePlugins{SchedulerName: p.SchedulerName, Plugins: append([]string(nil), p.Plugins...)}
		for _, c := range p.Configs {
			s, err := c.settings()
			if err != nil {
				// The plugin's factory reports the same error; without
				// every plugin's settings the host cannot compare.
				klog.FromContext(ctx).V(2).Info("schedplug: not sending the profile's plugin settings", "profile", p.SchedulerName, "err", err)
				pp.Settings = nil
				break
			}
			pp.Settings = append(pp.Settings, s)
		}
		req.Profiles = append(req.Profiles, pp)
	}
	return req
}

// refusedPodsCap bounds the pods remembered for re-activation once the
// host is back.
const refusedPodsCap = 10000

// refusedPods are the pods a failure policy rejected while the host did
// not answer.
type refusedPods struct {
	mu   sync.Mutex
	pods map[string]*v1.Pod
}

func newRefusedPods() refusedPods { return refusedPods{pods: map[string]*v1.Pod{}} }

func (r *refusedPods) add(pod *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pods) < refusedPodsCap {
		r.pods[pod.Namespace+"/"+pod.Name] = pod
	}
}

func (r *refusedPods) take() map[string]*v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.pods
	r.pods = map[string]*v1.Pod{}
	return out
}
