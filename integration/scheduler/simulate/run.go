// Package simulate runs kube-scheduler on kubectl dumps of nodes and pods
// without a cluster: upstream's scheduler, built from a
// KubeSchedulerConfiguration with its in-tree plugins and the shim's native
// plugins (served by schedplug-host), against client-go's in-memory fake
// API. It reports where each pending pod went, or kube-scheduler's own
// FailedScheduling message, and for chosen pods every node's verdict and
// scores (docs/simulate.md). kube-scheduler-simulate is its command;
// `schedplug simulate` runs that.
package simulate

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"schedplug.dev/integration/scheduler/command"
)

// Options are one simulation's inputs.
type Options struct {
	Config string // the KubeSchedulerConfiguration file
	Nodes  string // `kubectl get nodes -o yaml` output
	Pods   string // `kubectl get pods -A -o yaml` output
	// Explain names the pods ("namespace/name") whose last cycle is
	// reported node by node; "*" is every pod.
	Explain []string
	// Timeout bounds the whole run.
	Timeout time.Duration
}

// InputError is a problem with a file the user gave: the configuration or
// a dump. Its message says which and what to fix.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }

// settleTime is how long kube-scheduler must stay idle (nothing queued or
// in flight, every pod change seen by its informer) before the simulation
// ends: time for the informer to hand the last events to kube-scheduler.
const settleTime = 100 * time.Millisecond

// Run simulates kube-scheduler on the dumps.
func Run(ctx context.Context, o Options) (*Result, error) {
	cfg, err := loadConfig(o.Config)
	if err != nil {
		return nil, InputError{err}
	}
	nodes, err := ReadNodes(o.Nodes)
	if err != nil {
		return nil, InputError{err}
	}
	pods, err := ReadPods(o.Pods)
	if err != nil {
		return nil, InputError{err}
	}
	profiles := map[string]bool{}
	for _, p := range cfg.Profiles {
		profiles[p.SchedulerName] = true
	}
	var bound, pending []*v1.Pod
	var namespaces []string
	for _, p := range pods {
		if !slices.Contains(namespaces, p.Namespace) {
			namespaces = append(namespaces, p.Namespace)
		}
		switch {
		case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
			// kube-scheduler's informer never lists finished pods.
		case p.Spec.NodeName != "":
			bound = append(bound, p)
		default:
			pending = append(pending, p)
		}
	}
	slices.SortStableFunc(pending, queueOrder)
	explainAll := slices.Contains(o.Explain, "*")
	detailed := func(k string) bool { return explainAll || slices.Contains(o.Explain, k) }

	hist := newHistory(nodes, detailed)
	cl, err := newCluster(nodes, bound, namespaces, hist)
	if err != nil {
		return nil, err
	}
	var warnings []string
	if len(cfg.Extenders) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s names %d scheduler extender(s); the simulation does not call them (they are HTTP services of a cluster)", o.Config, len(cfg.Extenders)))
	}
	if err := repeatableFeatures(); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	informers := scheduler.NewInformerFactory(cl.client, 0, nil)
	sinkFor := func(string) events.EventRecorderLogger { return eventSink{hist} }
	sched, err := scheduler.New(ctx, cl.client, informers, nil, sinkFor,
		scheduler.WithComponentConfigVersion(cfg.TypeMeta.APIVersion),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithFrameworkOutOfTreeRegistry(command.NativeRegistry(cfg, command.Extras{})),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithParallelism(cfg.Parallelism))
	if err != nil {
		return nil, InputError{fmt.Errorf("%s: kube-scheduler refuses the configuration: %w", o.Config, err)}
	}
	result := &Result{KubeScheduler: kubeSchedulerVersion(), Warnings: append([]string{}, warnings...), Evicted: []Eviction{}}
	for _, p := range cfg.Profiles {
		result.Profiles = append(result.Profiles, profileOf(p.SchedulerName, sched.Profiles[p.SchedulerName]))
	}
	observe(sched, hist, cl)

	follow, err := cl.follow(informers.Core().V1().Pods().Informer())
	if err != nil {
		return nil, err
	}
	informers.Start(ctx.Done())
	informers.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, fmt.Errorf("kube-scheduler's informers did not sync: %w", err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), follow.HasSynced) {
		return nil, fmt.Errorf("the pod informer did not sync: %w", ctx.Err())
	}

	// The pending pods enter the queue in queue order before kube-scheduler
	// takes the first, so it takes them by priority, then as listed.
	var queued []*v1.Pod
	for _, p := range pending {
		if !profiles[p.Spec.SchedulerName] {
			continue
		}
		if err := cl.create(ctx, p); err != nil {
			return nil, fmt.Errorf("adding pod %s: %w", key(p), err)
		}
		queued = append(queued, p)
	}
	for {
		inQueue, _ := sched.SchedulingQueue.PendingPods()
		if len(inQueue) >= len(queued) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kube-scheduler's queue took %d of %d pods before the timeout (%s)", len(inQueue), len(queued), o.Timeout)
		case <-time.After(time.Millisecond):
		}
	}
	go sched.Run(ctx)
	if err := settle(ctx, sched, cl, hist, queued, o.Timeout); err != nil {
		return nil, err
	}

	for _, p := range pending {
		result.Pods = append(result.Pods, podResult(p, profiles, hist, nodes))
	}
	for _, p := range bound {
		if s := hist.snapshot(key(p)); s.deleted {
			result.Evicted = append(result.Evicted, Eviction{Pod: key(p), Node: p.Spec.NodeName, By: s.evictedBy})
		}
	}
	return result, nil
}

// loadConfig reads and checks the configuration as kube-scheduler does.
func loadConfig(file string) (*config.KubeSchedulerConfiguration, error) {
	cfg, err := options.LoadConfigFromFile(klog.Background(), file)
	if err != nil {
		return nil, fmt.Errorf("%s: kube-scheduler cannot read it: %w", file, err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("%s: kube-scheduler refuses it: %w", file, err)
	}
	return cfg, nil
}

// repeatableFeatures turns off two of kube-scheduler's optimizations whose
// effect depends on timing, so that a simulation gives the same answer on
// every run: opportunistic batching (reusing an identical pod's scores
// from the cycle before, within 500 ms; the same placements as scoring
// again) and asynchronous preemption (the same victims, evicted within the
// preemptor's cycle).
func repeatableFeatures() error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		string(features.OpportunisticBatching):    false,
		string(features.SchedulerAsyncPreemption): false,
	})
}

// queueOrder is kube-scheduler's PrioritySort for pods that enter the
// queue in creation order: higher priority first, then older.
func queueOrder(a, b *v1.Pod) int {
	if c := cmp.Compare(priority(b), priority(a)); c != 0 {
		return c
	}
	return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// profileOf lists a profile's Filter and Score plugins as its framework
// runs them.
func profileOf(name string, f framework.Framework) Profile {
	p := Profile{Name: name, Filters: []string{}, Scores: []Weighted{}}
	plugins := f.ListPlugins()
	for _, e := range plugins.Filter.Enabled {
		p.Filters = append(p.Filters, e.Name)
	}
	for _, e := range plugins.Score.Enabled {
		p.Scores = append(p.Scores, Weighted{Plugin: e.Name, Weight: int64(e.Weight)})
	}
	return p
}

// kubeSchedulerVersion is the k8s.io/kubernetes module this binary was
// built with.
func kubeSchedulerVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return d.Version
			}
		}
	}
	return "unknown"
}
