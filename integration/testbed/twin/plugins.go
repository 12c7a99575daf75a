// Package twin holds Go re-implementations ("twins") of the sample native
// plugins HwEncrypt (plugins/hw-encrypt), DedicatedNodes
// (plugins/dedicated-nodes) and NetworkLatency (plugins/network-latency;
// network_latency.go), the Filter and resource hooks of DeviceShare
// (plugins/device-share; device_share.go), and TwinCheck, a Filter plugin
// that asks a native plugin and its twin about the same pod and NodeInfo
// and notes every difference. The Filter twins, DeviceShare's and
// TwinCheck are compiled only into the test build of kube-scheduler
// (integration/testbed/cmd/kube-scheduler-twin), for the differential
// end-to-end tests in integration/testbed/e2e (docs/e2e.md); the
// scheduler_perf suite (integration/testbed/perf) registers the first
// three twins, ShapeFit's (shape_fit.go) and DeviceShare's with the native
// Score (DeviceSharePacking).
package twin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Default keys, as in the native plugins.
const (
	DefaultHwAnnotation        = "myorg.io/require-hw-encrypt"
	DefaultHwLabel             = "node.kubernetes.io/hw-encrypt"
	DefaultDedicatedLabel      = "schedplug.io/dedicated"
	DefaultDedicatedAnnotation = "schedplug.io/dedicated-ok"
)

// Verdict is a Filter outcome in plain data: the code the framework sees
// and the reasons shown in the FailedScheduling event.
type Verdict struct {
	Code    fwk.Code
	Reasons []string
}

// Status turns the verdict into a framework status (nil for Success).
func (v Verdict) Status() *fwk.Status {
	if v.Code == fwk.Success {
		return nil
	}
	return fwk.NewStatus(v.Code, v.Reasons...)
}

func (v Verdict) String() string {
	if len(v.Reasons) == 0 {
		return v.Code.String()
	}
	return fmt.Sprintf("%s %q", v.Code, strings.Join(v.Reasons, "; "))
}

// HwEncryptArgs are HwEncrypt's args.
type HwEncryptArgs struct {
	PodAnnotation string
	NodeLabel     string
}

// HwEncryptRules is HwEncrypt's Filter as a pure function, shared by the
// Go twin and by end-to-end tests that check placements.
type HwEncryptRules struct {
	args           HwEncryptArgs
	lacks, badWant string
}

// NewHwEncryptRules builds the rules; empty args take the defaults.
func NewHwEncryptRules(a HwEncryptArgs) HwEncryptRules {
	if a.PodAnnotation == "" {
		a.PodAnnotation = DefaultHwAnnotation
	}
	if a.NodeLabel == "" {
		a.NodeLabel = DefaultHwLabel
	}
	return HwEncryptRules{
		args:    a,
		lacks:   "node(s) didn't have hardware encryption (label " + a.NodeLabel + "=true)",
		badWant: "pod's annotation " + a.PodAnnotation + " must be \"true\" or \"false\"",
	}
}

// Applies is the native Applies hook: the annotation is present and not
// "false".
func (r HwEncryptRules) Applies(podAnnotations map[string]string) bool {
	v, ok := podAnnotations[r.args.PodAnnotation]
	return ok && v != "false"
}

// Filter is the native Filter.
func (r HwEncryptRules) Filter(podAnnotations, nodeLabels map[string]string) Verdict {
	want, ok := podAnnotations[r.args.PodAnnotation]
	if !ok || want == "false" {
		return Verdict{Code: fwk.Success}
	}
	if want != "true" {
		return Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{r.badWant}}
	}
	if v, ok := nodeLabels[r.args.NodeLabel]; ok && v == "true" {
		return Verdict{Code: fwk.Success}
	}
	return Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{r.lacks}}
}

// DedicatedNodesArgs are DedicatedNodes' args.
type DedicatedNodesArgs struct {
	NodeLabel     string
	PodAnnotation string
}

// DedicatedNodesRules is DedicatedNodes' Filter as a pure function.
type DedicatedNodesRules struct {
	args   DedicatedNodesArgs
	reason string
}

// NewDedicatedNodesRules builds the rules; empty args take the defaults.
func NewDedicatedNodesRules(a DedicatedNodesArgs) DedicatedNodesRules {
	if a.NodeLabel == "" {
		a.NodeLabel = DefaultDedicatedLabel
	}
	if a.PodAnnotation == "" {
		a.PodAnnotation = DefaultDedicatedAnnotation
	}
	return DedicatedNodesRules{
		args:   a,
		reason: "node(s) were dedicated (" + a.NodeLabel + "=true) and the pod lacks annotation " + a.PodAnnotation + "=true",
	}
}

// Filter is the native Filter (the plugin has no Applies hook).
func (r DedicatedNodesRules) Filter(podAnnotations, nodeLabels map[string]string) Verdict {
	if v, ok := nodeLabels[r.args.NodeLabel]; !ok || v != "true" {
		return Verdict{Code: fwk.Success}
	}
	if v, ok := podAnnotations[r.args.PodAnnotation]; ok && v == "true" {
		return Verdict{Code: fwk.Success}
	}
	return Verdict{Code: fwk.UnschedulableAndUnresolvable, Reasons: []string{r.reason}}
}

// nodeEvents are the events both native plugins declare
// (SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL), with the
// pod's own updates that the shim always adds.
func nodeEvents() []fwk.ClusterEventWithHint {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
		{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel | fwk.UpdatePodToleration | fwk.UpdatePodScaleDown}},
	}
}

// HwEncrypt is the Go twin of the native HwEncrypt.
type HwEncrypt struct {
	name  string
	rules HwEncryptRules
}

var (
	_ fwk.PreFilterPlugin   = (*HwEncrypt)(nil)
	_ fwk.FilterPlugin      = (*HwEncrypt)(nil)
	_ fwk.EnqueueExtensions = (*HwEncrypt)(nil)
	_ fwk.SignPlugin        = (*HwEncrypt)(nil)
	_ fwk.FilterPlugin      = (*DedicatedNodes)(nil)
	_ fwk.EnqueueExtensions = (*DedicatedNodes)(nil)
	_ fwk.SignPlugin        = (*DedicatedNodes)(nil)
)

// annotationSignature signs a pod by the one annotation a twin reads, as a
// Go plugin written for kube-scheduler's opportunistic batching would.
func annotationSignature(plugin, key string, pod *v1.Pod) []fwk.SignFragment {
	v, ok := pod.Annotations[key]
	return []fwk.SignFragment{{Key: "schedplug.dev/twin/" + plugin, Value: [2]any{ok, v}}}
}

// NewHwEncrypt is the plugin factory for the twin registered as name.
func NewHwEncrypt(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		args, err := stringArgs(name, obj, "podAnnotation", "nodeLabel")
		if err != nil {
			return nil, err
		}
		p := &HwEncrypt{name: name, rules: NewHwEncryptRules(HwEncryptArgs{PodAnnotation: args["podAnnotation"], NodeLabel: args["nodeLabel"]})}
		if h != nil {
			remember(h, name, p)
		}
		return p, nil
	}
}

func (p *HwEncrypt) Name() string { return p.name }

// PreFilter skips the plugin for pods it does not apply to, as the shim
// does when the native Applies hook says no.
func (p *HwEncrypt) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !p.rules.Applies(pod.Annotations) {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

func (p *HwEncrypt) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func (p *HwEncrypt) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node not found")
	}
	return p.rules.Filter(pod.Annotations, node.Labels).Status()
}

func (p *HwEncrypt) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return annotationSignature(p.name, p.rules.args.PodAnnotation, pod), nil
}

func (p *HwEncrypt) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nodeEvents(), nil
}

// DedicatedNodes is the Go twin of the native DedicatedNodes.
type DedicatedNodes struct {
	name  string
	rules DedicatedNodesRules
}

// NewDedicatedNodes is the plugin factory for the twin registered as name.
func NewDedicatedNodes(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		args, err := stringArgs(name, obj, "nodeLabel", "podAnnotation")
		if err != nil {
			return nil, err
		}
		p := &DedicatedNodes{name: name, rules: NewDedicatedNodesRules(DedicatedNodesArgs{NodeLabel: args["nodeLabel"], PodAnnotation: args["podAnnotation"]})}
		if h != nil {
			remember(h, name, p)
		}
		return p, nil
	}
}

func (p *DedicatedNodes) Name() string { return p.name }

func (p *DedicatedNodes) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node not found")
	}
	return p.rules.Filter(pod.Annotations, node.Labels).Status()
}

func (p *DedicatedNodes) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return annotationSignature(p.name, p.rules.args.PodAnnotation, pod), nil
}

func (p *DedicatedNodes) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nodeEvents(), nil
}

// rawArgs is the JSON object of a plugin's pluginConfig args (out-of-tree
// args reach a factory as *runtime.Unknown), or nil when there are none.
func rawArgs(plugin string, obj runtime.Object) (map[string]json.RawMessage, error) {
	if obj == nil {
		return nil, nil
	}
	var raw []byte
	if u, ok := obj.(*runtime.Unknown); ok {
		raw = u.Raw
	} else {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("plugin %q: cannot read pluginConfig args of type %T: %w", plugin, obj, err)
		}
		raw = data
	}
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("plugin %q: pluginConfig args must be an object: %w", plugin, err)
	}
	return top, nil
}

// stringArgs reads args that are all optional non-empty strings, with the
// native plugins' rules: unknown keys (names are case-sensitive) and
// values that are not non-empty strings are errors.
func stringArgs(plugin string, obj runtime.Object, known ...string) (map[string]string, error) {
	top, err := rawArgs(plugin, obj)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(known, k) {
			for _, want := range known {
				if strings.EqualFold(want, k) {
					return nil, fmt.Errorf("plugin %q: unknown arg %q; did you mean %q? arg names are case-sensitive", plugin, k, want)
				}
			}
			return nil, fmt.Errorf("plugin %q: unknown arg %q; known args: %s", plugin, k, strings.Join(known, ", "))
		}
		var s string
		if err := json.Unmarshal(top[k], &s); err != nil || s == "" {
			return nil, fmt.Errorf("plugin %q: arg %q must be a non-empty string, got %s", plugin, k, top[k])
		}
		out[k] = s
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
