package shim

import (
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/simannot"
)

// kube-scheduler-simulator's result annotations for profiles that set
// simulatorAnnotations (docs/simulator-annotations.md): the profile's
// setting, the answers each of its cycles starts noting, and the hand-over of
// finished cycles to the writer (package simannot).

// annotationSetting is one profile's simulatorAnnotations: on when one of
// its native plugins says true; onBy and offBy name the first plugin to
// say true and false (both: the profile is refused).
type annotationSetting struct {
	onBy, offBy string
}

// noteAnnotations notes plugin's simulatorAnnotations. Callers hold r.mu.
func (r *registry) noteAnnotations(profile, plugin string, t Toggle) {
	a := r.annotations[profile]
	if a == nil {
		a = &annotationSetting{}
		r.annotations[profile] = a
	}
	switch {
	case t == On && a.onBy == "":
		a.onBy = plugin
	case t == Off && a.offBy == "":
		a.offBy = plugin
	}
}

// annotates says whether the profile writes the simulator's annotations.
func (r *registry) annotates(profile string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a := r.annotations[profile]
	return a != nil && a.onBy != ""
}

// annotationConflict is the error of a profile whose native plugins say
// both true and false, with the host's words (schedplug check).
func (r *registry) annotationConflict(profile string) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a := r.annotations[profile]
	if a == nil || a.onBy == "" || a.offBy == "" {
		return nil
	}
	return fmt.Errorf("profile %q: pluginConfig %q sets args.%s.simulatorAnnotations true but %q sets it false; it is one setting for the whole profile: write it on one native plugin only", profile, a.onBy, ArgsKey, a.offBy)
}

// scoreWeights are the weights kube-scheduler gives the profile's native
// plugins (1 where the configuration is not known).
func (r *registry) scoreWeights(profile string) map[string]int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string]int64{}
	for _, p := range r.profiles {
		if p.SchedulerName != profile {
			continue
		}
		for _, c := range p.Configs {
			if c.Weight > 0 {
				out[c.Name] = int64(c.Weight)
			}
		}
	}
	return out
}

// annotations is the manager's part: the writer, made when the first
// plugin of a profile that writes annotations is created, and the last
// cycle's answers, handed over when the next cycle starts if kube-scheduler
// reserved no node for it (a cycle that fails has no later hook).
type annotations struct {
	client  kubernetes.Interface
	opts    simannot.Options
	once    sync.Once
	writer  *simannot.Writer
	err     error
	last    atomic.Pointer[simannot.CycleAnswers]
	weights sync.Map // profile -> map[string]int64
}

// start makes the writer, with its own API client (so that patches never
// wait for kube-scheduler's client rate limit), from the handle's
// kubeconfig unless Config named a client.
func (a *annotations) start(h fwk.Handle) error {
	a.once.Do(func() {
		client := a.client
		if client == nil {
			if h == nil || h.KubeConfig() == nil {
				a.err = fmt.Errorf("simulatorAnnotations: kube-scheduler gave the plugin no API client configuration to write the annotations with")
				return
			}
			cfg := rest.CopyConfig(h.KubeConfig())
			// The writer's own rate limit is the one that counts.
			cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
			cfg.UserAgent = "schedplug-simulator-annotations"
			if client, a.err = kubernetes.NewForConfig(cfg); a.err != nil {
				a.err = fmt.Errorf("simulatorAnnotations: cannot make an API client to write the annotations: %w", a.err)
				return
			}
		}
		a.writer = simannot.NewWriter(client, a.opts)
	})
	return a.err
}

func (a *annotations) close() {
	if a.writer != nil {
		a.writer.Close()
	}
}

// cycleStarted hands over the previous cycle's answers if it reserved no
// node; answers (nil: the profile writes no annotations) is the new one.
func (a *annotations) cycleStarted(answers *simannot.CycleAnswers) {
	if prev := a.last.Swap(answers); prev != nil && !prev.WasReserved() && a.writer != nil {
		a.writer.Enqueue(prev)
	}
}

// reserved hands over a cycle's answers once kube-scheduler reserved node.
func (a *annotations) reserved(answers *simannot.CycleAnswers, node string, scores simannot.Scores) {
	if answers.Reserved(node, scores) && a.writer != nil {
		a.writer.Enqueue(answers)
	}
}

// newCycleAnswers starts the answers of pod's cycle in p's profile, nil when the
// profile writes no annotations.
func (p *Plugin) newCycleAnswers(pod *v1.Pod, nodes int) *simannot.CycleAnswers {
	r := p.mgr.registry
	if !r.annotates(p.profile) {
		return nil
	}
	a := &p.mgr.annotations
	w, ok := a.weights.Load(p.profile)
	if !ok {
		w, _ = a.weights.LoadOrStore(p.profile, r.scoreWeights(p.profile))
	}
	return simannot.NewCycleAnswers(simannot.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		r.Plugins(p.profile), w.(map[string]int64), nodes)
}
