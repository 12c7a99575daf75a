package twin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// CheckName is the name TwinCheck is registered under.
const CheckName = "TwinCheck"

// EnvReport names the file TwinCheck appends one JSON line to per
// divergence (Divergence). Without it divergences are only logged and
// counted.
const EnvReport = "SCHEDPLUG_TWIN_REPORT"

// Pair is a native plugin and its Go twin, by their names in the profile.
type Pair struct {
	Native string `json:"native"`
	Twin   string `json:"twin"`
}

// Divergence is one Filter call where the native plugin and its twin
// disagreed.
type Divergence struct {
	Time   time.Time `json:"time"`
	Pod    string    `json:"pod"` // namespace/name
	PodUID string    `json:"podUID"`
	Node   string    `json:"node"`
	// Kind is "snapshot" when the NodeInfo is the cycle snapshot's, or
	// "what-if" (preemption dry run, nominated-pods pass) otherwise.
	Kind   string `json:"kind"`
	Native string `json:"native"` // plugin name
	Twin   string `json:"twin"`
	// The two verdicts as text, e.g. `UnschedulableAndUnresolvable "node(s) ..."`.
	NativeVerdict string `json:"nativeVerdict"`
	TwinVerdict   string `json:"twinVerdict"`
}

func (d Divergence) String() string {
	return fmt.Sprintf("pod %s on node %s (%s NodeInfo): %s said %s, %s said %s",
		d.Pod, d.Node, d.Kind, d.Native, d.NativeVerdict, d.Twin, d.TwinVerdict)
}

var (
	comparisons = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_twin",
		Name:           "comparisons_total",
		Help:           "Filter verdicts compared between a native plugin and its Go twin, by native plugin, NodeInfo kind (snapshot or what-if) and the native verdict's code.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "kind", "code"})
	divergences = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "schedplug_twin",
		Name:           "divergences_total",
		Help:           "Filter calls where a native plugin and its Go twin disagreed.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin"})
	podsCompared = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      "schedplug_twin",
		Name:           "pods_compared",
		Help:           "Distinct pods for which at least one verdict was compared.",
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

// registry holds every plugin instance the factories wrapped with
// Remember, per profile, so that TwinCheck can call the native plugin and
// its twin directly.
var registry struct {
	sync.Mutex
	plugins map[string]map[string]fwk.Plugin
}

func remember(h interface{ ProfileName() string }, name string, p fwk.Plugin) {
	profile := ""
	if h != nil {
		profile = h.ProfileName()
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.plugins == nil {
		registry.plugins = map[string]map[string]fwk.Plugin{}
	}
	if registry.plugins[profile] == nil {
		registry.plugins[profile] = map[string]fwk.Plugin{}
	}
	registry.plugins[profile][name] = p
}

func lookup(profile, name string) fwk.Plugin {
	registry.Lock()
	defer registry.Unlock()
	return registry.plugins[profile][name]
}

// PluginFactory is the framework's factory signature.
type PluginFactory = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error)

// Remember wraps a factory (the shim's, for a native plugin) so that
// TwinCheck can find the instances it creates.
func Remember(name string, f PluginFactory) PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		p, err := f(ctx, obj, h)
		if err == nil && h != nil {
			remember(h, name, p)
		}
		return p, err
	}
}

// Check is TwinCheck: a Filter plugin that, for every node it is asked
// about, asks each pair's native plugin and Go twin for their verdict on
// the same CycleState and NodeInfo, notes any difference and then lets
// the node pass (the two plugins themselves run after it in the profile
// and decide). Enable it at filter: as well, so it runs before every other
// Filter and sees every node, not only those the others let through.
type Check struct {
	handle checkHandle
	pairs  []Pair
	report string

	mu   sync.Mutex
	pods map[types.UID]struct{}
	file *os.File
}

var _ fwk.FilterPlugin = (*Check)(nil)

// checkHandle is the part of fwk.Handle TwinCheck uses.
type checkHandle interface {
	ProfileName() string
	SnapshotSharedLister() fwk.SharedLister
}

// NewCheck is TwinCheck's factory. Args: {"pairs": [{"native": "HwEncrypt",
// "twin": "GoHwEncrypt"}, ...], "report": "/file.jsonl"}; without report,
// $SCHEDPLUG_TWIN_REPORT names the file.
func NewCheck(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	top, err := rawArgs(CheckName, obj)
	if err != nil {
		return nil, err
	}
	var pairs []Pair
	report := os.Getenv(EnvReport)
	for k, v := range top {
		switch k {
		case "pairs":
			if err := json.Unmarshal(v, &pairs); err != nil {
				return nil, fmt.Errorf("plugin %q: arg pairs must be a list of {native, twin} plugin names: %v", CheckName, err)
			}
		case "report":
			if err := json.Unmarshal(v, &report); err != nil {
				return nil, fmt.Errorf("plugin %q: arg report must be a file name: %v", CheckName, err)
			}
		default:
			return nil, fmt.Errorf("plugin %q: unknown arg %q; known args: pairs, report", CheckName, k)
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("plugin %q: arg pairs is empty; name at least one {native, twin} pair", CheckName)
	}
	for _, p := range pairs {
		if p.Native == "" || p.Twin == "" {
			return nil, fmt.Errorf("plugin %q: pair %+v needs both a native and a twin plugin name", CheckName, p)
		}
	}
	registerOnce.Do(func() { legacyregistry.MustRegister(comparisons, divergences, podsCompared) })
	return &Check{handle: h, pairs: pairs, report: report, pods: map[types.UID]struct{}{}}, nil
}

func (c *Check) Name() string { return CheckName }

// Filter compares; it never rejects.
func (c *Check) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return nil
	}
	kind := "what-if"
	if snap, err := c.handle.SnapshotSharedLister().NodeInfos().Get(node.Name); err == nil && snap == ni {
		kind = "snapshot"
	}
	profile := c.handle.ProfileName()
	for _, pair := range c.pairs {
		nat, _ := lookup(profile, pair.Native).(fwk.FilterPlugin)
		tw, _ := lookup(profile, pair.Twin).(fwk.FilterPlugin)
		if nat == nil || tw == nil {
			return fwk.AsStatus(fmt.Errorf("%s: profile %q has no Filter plugin %q or %q; enable both next to %s", CheckName, profile, pair.Native, pair.Twin, CheckName))
		}
		nv := verdict(ctx, state, nat, pod, ni)
		tv := verdict(ctx, state, tw, pod, ni)
		comparisons.WithLabelValues(pair.Native, kind, nv.Code.String()).Inc()
		if nv.Code != tv.Code || !slices.Equal(nv.Reasons, tv.Reasons) {
			c.diverged(ctx, Divergence{
				Time: time.Now(), Pod: pod.Namespace + "/" + pod.Name, PodUID: string(pod.UID), Node: node.Name, Kind: kind,
				Native: pair.Native, Twin: pair.Twin, NativeVerdict: nv.String(), TwinVerdict: tv.String(),
			})
		}
		// Like the framework (and schedplug-host's chain), later Filters
		// are not asked about a node an earlier one rejected: the host
		// does not evaluate them there, and its answer for them on that
		// node means "not evaluated", not "fits". So pairs are compared
		// in profile order up to the first rejection.
		if nv.Code != fwk.Success || tv.Code != fwk.Success {
			break
		}
	}
	c.mu.Lock()
	if _, seen := c.pods[pod.UID]; !seen {
		c.pods[pod.UID] = struct{}{}
		podsCompared.Set(float64(len(c.pods)))
	}
	c.mu.Unlock()
	return nil
}

// verdict is what the framework would take from the plugin's Filter: a
// plugin its PreFilter skipped passes.
func verdict(ctx context.Context, state fwk.CycleState, pl fwk.FilterPlugin, pod *v1.Pod, ni fwk.NodeInfo) Verdict {
	if state.GetSkipFilterPlugins().Has(pl.Name()) {
		return Verdict{Code: fwk.Success}
	}
	s := pl.Filter(ctx, state, pod, ni)
	if s.IsSuccess() {
		return Verdict{Code: fwk.Success}
	}
	return Verdict{Code: s.Code(), Reasons: s.Reasons()}
}

func (c *Check) diverged(ctx context.Context, d Divergence) {
	divergences.WithLabelValues(d.Native).Inc()
	klog.FromContext(ctx).Error(nil, "native plugin and Go twin disagree", "divergence", d.String())
	if c.report == "" {
		return
	}
	line, err := json.Marshal(d)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == nil {
		f, err := os.OpenFile(c.report, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			klog.FromContext(ctx).Error(err, "cannot open the twin divergence report", "file", c.report)
			return
		}
		c.file = f
	}
	_, _ = c.file.Write(append(line, '\n'))
}

// Registry is what the test build of kube-scheduler registers: the twins
// under the names Go<Native>, and TwinCheck.
func Registry() map[string]PluginFactory {
	return map[string]PluginFactory{
		"GoHwEncrypt":      NewHwEncrypt("GoHwEncrypt"),
		"GoDedicatedNodes": NewDedicatedNodes("GoDedicatedNodes"),
		"GoDeviceShare":    NewDeviceShare("GoDeviceShare"),
		CheckName:          NewCheck,
	}
}
