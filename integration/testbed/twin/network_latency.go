package twin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// DefaultLatencyMs is NetworkLatency's default for nodes the file does not
// list.
const DefaultLatencyMs = 100.0

// maxLatencyMs is the largest figure the native plugin accepts.
const maxLatencyMs = 3600000.0

// NetworkLatencyRules is NetworkLatency's Score and normalization as pure
// functions: raw scores are latencies in microseconds, and the host's
// reversed min-max maps the lowest to 100.
type NetworkLatencyRules struct {
	micros        map[string]int64
	defaultMicros int64
}

// NewNetworkLatencyRules builds the rules from the latency file's text
// (`<node-name> <milliseconds>` per line, `#` comments), with source naming
// the file in errors as the native plugin does.
func NewNetworkLatencyRules(text, source string, defaultMs float64) (NetworkLatencyRules, error) {
	r := NetworkLatencyRules{micros: map[string]int64{}, defaultMicros: int64(math.Round(defaultMs * 1000))}
	for i, line := range strings.Split(text, "\n") {
		if hash := strings.IndexByte(line, '#'); hash >= 0 {
			line = line[:hash]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d: ", source, i+1)
		if len(fields) != 2 {
			return r, fmt.Errorf("%sexpected \"<node-name> <milliseconds>\", got %q", where, strings.TrimSpace(line))
		}
		ms, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || ms < 0 || ms > maxLatencyMs || math.IsNaN(ms) {
			return r, fmt.Errorf("%slatency of node %q must be a number of milliseconds from 0 to 3600000, got %q", where, fields[0], fields[1])
		}
		if _, dup := r.micros[fields[0]]; dup {
			return r, fmt.Errorf("%snode %q is listed twice", where, fields[0])
		}
		r.micros[fields[0]] = int64(math.Round(ms * 1000))
	}
	return r, nil
}

// Score is the native Score: the node's latency in microseconds.
func (r NetworkLatencyRules) Score(node string) int64 {
	if v, ok := r.micros[node]; ok {
		return v
	}
	return r.defaultMicros
}

// Normalize is the host's reversed min-max (SCHEDPLUG_NORMALIZE_REVERSE):
// the lowest latency gets 100, the highest 0, rounded to nearest; every
// node gets 100 when all are equal.
func (r NetworkLatencyRules) Normalize(scores []int64) { minMax(scores, true) }

// minMax is the host's min-max normalization onto [0, 100], rounded to
// nearest: the highest raw score gets 100 (SCHEDPLUG_NORMALIZE_LINEAR), or
// the lowest when reverse (SCHEDPLUG_NORMALIZE_REVERSE); every node gets
// 100 when all are equal.
func minMax(scores []int64, reverse bool) {
	if len(scores) == 0 {
		return
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	if lo == hi {
		for i := range scores {
			scores[i] = 100
		}
		return
	}
	span := hi - lo
	for i, s := range scores {
		d := s - lo
		if reverse {
			d = hi - s
		}
		scores[i] = (d*100 + span/2) / span
	}
}

// NetworkLatency is the Go twin of the native NetworkLatency. It reads the
// latency file once, at start (the native plugin re-reads it every
// refreshPeriod; the suite's file does not change).
type NetworkLatency struct {
	name  string
	rules NetworkLatencyRules
}

var (
	_ fwk.ScorePlugin       = (*NetworkLatency)(nil)
	_ fwk.ScoreExtensions   = (*NetworkLatency)(nil)
	_ fwk.EnqueueExtensions = (*NetworkLatency)(nil)
)

// NewNetworkLatency is the plugin factory for the twin registered as name:
// args latencyFile (required), defaultLatencyMs and refreshPeriod, as the
// native plugin's.
func NewNetworkLatency(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
		raw, err := rawArgs(name, obj)
		if err != nil {
			return nil, err
		}
		var file string
		defaultMs := DefaultLatencyMs
		for k, v := range raw {
			switch k {
			case "latencyFile":
				if err := json.Unmarshal(v, &file); err != nil || file == "" {
					return nil, fmt.Errorf("plugin %s: arg \"latencyFile\" must be a non-empty string", name)
				}
			case "defaultLatencyMs":
				if err := json.Unmarshal(v, &defaultMs); err != nil || defaultMs < 0 || defaultMs > maxLatencyMs {
					return nil, fmt.Errorf("plugin %s: arg \"defaultLatencyMs\" must be a number from 0 to 3600000", name)
				}
			case "refreshPeriod":
				// Accepted for the native plugin's sake: the twin reads the
				// file once.
			default:
				return nil, fmt.Errorf("plugin %s: unknown arg %q (known: latencyFile, defaultLatencyMs, refreshPeriod)", name, k)
			}
		}
		if file == "" {
			return nil, fmt.Errorf("plugin %s: arg \"latencyFile\" is required", name)
		}
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		rules, err := NewNetworkLatencyRules(string(text), file, defaultMs)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		return &NetworkLatency{name: name, rules: rules}, nil
	}
}

func (p *NetworkLatency) Name() string { return p.name }

func (p *NetworkLatency) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	node := ni.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	return p.rules.Score(node.Name), nil
}

func (p *NetworkLatency) ScoreExtensions() fwk.ScoreExtensions { return p }

func (p *NetworkLatency) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	raw := make([]int64, len(scores))
	for i := range scores {
		raw[i] = scores[i].Score
	}
	p.rules.Normalize(raw)
	for i := range scores {
		scores[i].Score = raw[i]
	}
	return nil
}

// EventsToRegister: scores never make a pod schedulable.
func (p *NetworkLatency) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}
