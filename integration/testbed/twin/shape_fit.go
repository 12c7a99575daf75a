package twin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
)

// ShapeFit's limits, as the native plugin's.
const (
	shapeFitMaxResources = 4
	shapeFitMaxCells     = 1 << 20
	shapeFitMaxRequest   = int64(1) << 50
)

// ShapeFitRules is ShapeFit's Score as a pure function: the share (0 to
// 100) of the capacity a node has left after the pod that the best mix of
// the typical pod shapes fills, on a grid of resolution buckets per
// resource (an unbounded multi-dimensional knapsack).
type ShapeFitRules struct {
	resources  []string
	shapes     [][]int64 // requests, in the order of resources
	resolution int
	cells      int
}

// ShapeFitArgs are ShapeFit's args: resource names (default cpu, memory),
// shapes (requests in canonical units: millicores, bytes, counts) and the
// resolution (buckets per resource, default 32).
type ShapeFitArgs struct {
	Resources  []string           `json:"resources"`
	Shapes     []map[string]int64 `json:"shapes"`
	Resolution *int               `json:"resolution"`
}

// NewShapeFitRules checks the args as the native plugin does.
func NewShapeFitRules(a ShapeFitArgs) (ShapeFitRules, error) {
	r := ShapeFitRules{resources: a.Resources, resolution: 32}
	if r.resources == nil {
		r.resources = []string{"cpu", "memory"}
	}
	if len(r.resources) == 0 || len(r.resources) > shapeFitMaxResources {
		return r, fmt.Errorf("arg \"resources\" must list 1 to %d resource names, got %d", shapeFitMaxResources, len(r.resources))
	}
	for i, name := range r.resources {
		if slices.Index(r.resources[:i], name) >= 0 {
			return r, fmt.Errorf("arg \"resources\" lists %q twice", name)
		}
	}
	if a.Resolution != nil {
		if *a.Resolution < 1 || *a.Resolution > 256 {
			return r, fmt.Errorf("arg \"resolution\" must be a whole number from 1 to 256, got %d", *a.Resolution)
		}
		r.resolution = *a.Resolution
	}
	r.cells = 1
	for range r.resources {
		r.cells *= r.resolution + 1
	}
	if r.cells > shapeFitMaxCells {
		return r, fmt.Errorf("arg \"resolution\" %d with %d resources makes a grid of %d cells, more than %d; lower the resolution or the resources",
			r.resolution, len(r.resources), r.cells, shapeFitMaxCells)
	}
	if len(a.Shapes) == 0 {
		return r, fmt.Errorf("arg \"shapes\" is required: a non-empty list of the typical pods' requests, e.g. [{\"cpu\": 500, \"memory\": 1073741824}] (millicores, bytes, counts)")
	}
	for i, s := range a.Shapes {
		shape := make([]int64, len(r.resources))
		nonzero := false
		for name, q := range s {
			at := slices.Index(r.resources, name)
			if at < 0 {
				return r, fmt.Errorf("arg \"shapes[%d]\" requests %q, which is not in arg \"resources\"", i, name)
			}
			if q < 0 || q > shapeFitMaxRequest {
				return r, fmt.Errorf("arg \"shapes[%d]\".%s must be a whole number from 0 to 2^50 in the resource's canonical unit (millicores, bytes, counts), got %d", i, name, q)
			}
			shape[at] = q
			nonzero = nonzero || q > 0
		}
		if !nonzero {
			return r, fmt.Errorf("arg \"shapes[%d]\" requests nothing; give it at least one request above 0", i)
		}
		r.shapes = append(r.shapes, shape)
	}
	return r, nil
}

// Resources are the resource names the rules read, in grid order.
func (r ShapeFitRules) Resources() []string { return r.resources }

// gridPool keeps the knapsack grids: Score runs on many nodes at once.
var gridPool sync.Pool

// Score is the native Score: left is the node's free capacity minus the
// pod's requests, per resource.
func (r ShapeFitRules) Score(left []int64) int64 {
	for _, l := range left {
		if l < 0 {
			return 0
		}
	}
	dims, res := len(r.resources), r.resolution
	stride := make([]int, dims)
	stride[dims-1] = 1
	for d := dims - 1; d > 0; d-- {
		stride[d-1] = stride[d] * (res + 1)
	}
	bp, _ := gridPool.Get().(*[]int16)
	if bp == nil || cap(*bp) < r.cells {
		b := make([]int16, r.cells)
		bp = &b
	}
	best := (*bp)[:r.cells]
	clear(best)
	need := make([]int, dims)
	for _, shape := range r.shapes {
		value, fits := 0, true
		for d, q := range shape {
			need[d] = 0
			if q == 0 {
				continue
			}
			if left[d] == 0 {
				fits = false
				break
			}
			n := (q*int64(res) + left[d] - 1) / left[d]
			if n > int64(res) {
				fits = false
				break
			}
			need[d] = int(n)
			value += int(n)
		}
		if fits {
			addShape(best, stride, need, res, int16(value))
		}
	}
	score := int64(best[r.cells-1]) * 100 / int64(dims*res)
	gridPool.Put(bp)
	return score
}

// addShape adds one shape, any number of times: best[x] = max(best[x],
// best[x-need] + value) for every cell x >= need, in ascending order so
// that best[x-need] already counts the shape. The last resource is the
// inner loop, one row at a time.
func addShape(best []int16, stride, need []int, res int, value int16) {
	last := len(need) - 1
	back := 0
	for d := range need {
		back += need[d] * stride[d]
	}
	from := need[last]
	at := make([]int, last)
	copy(at, need[:last])
	for {
		row := 0
		for d := range at {
			row += at[d] * stride[d]
		}
		// Within one row (a shape that needs only the last resource) src
		// overlaps dst and reads the cells this loop just raised.
		dst := best[row+from : row+res+1]
		src := best[row-back+from : row-back+res+1]
		src = src[:len(dst)]
		for j := range dst {
			dst[j] = max(dst[j], src[j]+value)
		}
		d := last
		for d > 0 {
			d--
			if at[d]++; at[d] <= res {
				break
			}
			at[d] = need[d]
			if d == 0 {
				return
			}
		}
		if last == 0 {
			return
		}
	}
}

// ShapeFit is the Go twin of the native ShapeFit.
type ShapeFit struct {
	name  string
	rules ShapeFitRules
}

var (
	_ fwk.PreScorePlugin    = (*ShapeFit)(nil)
	_ fwk.ScorePlugin       = (*ShapeFit)(nil)
	_ fwk.EnqueueExtensions = (*ShapeFit)(nil)
	_ fwk.SignPlugin        = (*ShapeFit)(nil)
)

// NewShapeFit is the plugin factory for the twin registered as name, with
// the native plugin's args.
func NewShapeFit(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
		raw, err := rawArgs(name, obj)
		if err != nil {
			return nil, err
		}
		var a ShapeFitArgs
		for k, v := range raw {
			var err error
			switch k {
			case "resources":
				err = json.Unmarshal(v, &a.Resources)
			case "shapes":
				err = json.Unmarshal(v, &a.Shapes)
			case "resolution":
				err = json.Unmarshal(v, &a.Resolution)
			default:
				return nil, fmt.Errorf("plugin %s: unknown arg %q (known: resources, shapes, resolution)", name, k)
			}
			if err != nil {
				return nil, fmt.Errorf("plugin %s: arg %q: %w", name, k, err)
			}
		}
		rules, err := NewShapeFitRules(a)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		return &ShapeFit{name: name, rules: rules}, nil
	}
}

func (p *ShapeFit) Name() string { return p.name }

// shapeFitState is the pod's requests of the rules' resources, read once
// per cycle in PreScore (as the native BeginPod does).
type shapeFitState struct{ requests []int64 }

func (s *shapeFitState) Clone() fwk.StateData { return s }

func (p *ShapeFit) stateKey() fwk.StateKey { return fwk.StateKey("PreScore" + p.name) }

func (p *ShapeFit) PreScore(_ context.Context, cs fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	st := &shapeFitState{requests: make([]int64, len(p.rules.resources))}
	for i, name := range p.rules.resources {
		switch name {
		case string(v1.ResourcePods):
			st.requests[i] = 1 // the slot the pod takes, as the shim sends it
		case string(v1.ResourceCPU):
			q := reqs[v1.ResourceCPU]
			st.requests[i] = q.MilliValue()
		default:
			q := reqs[v1.ResourceName(name)]
			st.requests[i] = q.Value()
		}
	}
	cs.Write(p.stateKey(), st)
	return nil
}

func (p *ShapeFit) Score(_ context.Context, cs fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	data, err := cs.Read(p.stateKey())
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("plugin %s: no PreScore state: %w", p.name, err))
	}
	st := data.(*shapeFitState)
	left := make([]int64, len(p.rules.resources))
	alloc, used := ni.GetAllocatable(), ni.GetRequested()
	for i, name := range p.rules.resources {
		left[i] = nodeResource(alloc, name, int64(alloc.GetAllowedPodNumber())) -
			nodeResource(used, name, int64(len(ni.GetPods()))) - st.requests[i]
	}
	return p.rules.Score(left), nil
}

// nodeResource is one of a NodeInfo's aggregates by resource name, in the
// units the shim sends (millicores, bytes, counts).
func nodeResource(r fwk.Resource, name string, pods int64) int64 {
	switch v1.ResourceName(name) {
	case v1.ResourceCPU:
		return r.GetMilliCPU()
	case v1.ResourceMemory:
		return r.GetMemory()
	case v1.ResourceEphemeralStorage:
		return r.GetEphemeralStorage()
	case v1.ResourcePods:
		return pods
	}
	return r.GetScalarResources()[v1.ResourceName(name)]
}

func (p *ShapeFit) ScoreExtensions() fwk.ScoreExtensions { return nil }

// SignPod signs by the requests the score reads, so that kube-scheduler's
// batching may reuse a ranking for the next pod alike (the native plugin
// promises SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY).
func (p *ShapeFit) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	var b strings.Builder
	for _, name := range p.rules.resources {
		q := reqs[v1.ResourceName(name)]
		fmt.Fprintf(&b, "%s=%s;", name, q.String())
	}
	return []fwk.SignFragment{{Key: "schedplug.dev/twin/" + p.name, Value: b.String()}}, nil
}

// EventsToRegister: scores never make a pod schedulable.
func (p *ShapeFit) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}
