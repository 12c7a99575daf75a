package cycle

import (
	"context"
	"slices"
	"sync"
	"time"

	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/nodetable"
)

// Dry-run answers and the single-node call, the last verdict sources:
// preemption dry runs and nominated-pod passes hand Filter NodeInfos that
// are not the snapshot's (a victim removed, a nominated pod added), so the
// PreFilter verdicts do not apply and the host must be asked about that
// exact NodeInfo. kube-scheduler then runs every Filter plugin on it in
// turn; asking the host once per native plugin cost one RPC per plugin per
// NodeInfo. One RPC now asks for all of the profile's native Filter
// plugins at once, and the answer waits in the cycle for the
// plugins that ask next about the same NodeInfo.

// dryRunKey names one NodeInfo state: removing or adding a pod gives the
// NodeInfo a new generation, so two dry-run states never share a key.
type dryRunKey struct {
	node  string
	state nodetable.State
}

// dryRunCacheCap bounds a cycle's answers (a preemption dry run visits each
// candidate node a few times); past it answers are simply not kept.
const dryRunCacheCap = 4096

// dryRunCache is shared by the CycleState clones of one cycle (a Cycle
// clones itself by reference), whose dry runs run in parallel.
type dryRunCache struct {
	mu      sync.Mutex
	answers map[dryRunKey]*pb.FilterResponse
}

func (c *dryRunCache) get(k dryRunKey) (*pb.FilterResponse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.answers[k]
	return r, ok
}

func (c *dryRunCache) put(k dryRunKey, r *pb.FilterResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[dryRunKey]*pb.FilterResponse{}
	}
	if len(c.answers) < dryRunCacheCap {
		c.answers[k] = r
	}
}

// verdictOf is plugin `name`'s verdict in an answer for all of `order`
// (the host runs them in that order and stops at the first that does not
// succeed). ok is false when the answer says nothing about it: an earlier
// plugin rejected the node, so the host never ran it.
func verdictOf(resp *pb.FilterResponse, order []string, name string) (Answer, bool) {
	for _, u := range resp.GetUnfinished() {
		if u.GetPlugin() == name {
			return Answer{Unfinished: u.GetReason()}, true
		}
	}
	if resp.GetCode() == pb.Code_CODE_SUCCESS {
		return passed, true
	}
	if resp.GetPlugin() == name {
		return Answer{Code: resp.GetCode(), Reason: resp.GetReason()}, true
	}
	at, rejecter := slices.Index(order, name), slices.Index(order, resp.GetPlugin())
	if at >= 0 && rejecter >= 0 && at < rejecter {
		return passed, true
	}
	return Answer{}, false
}

// fromDryRun answers Filter on a NodeInfo the cycle's call did not
// evaluate: from an answer the cycle already has for this exact NodeInfo
// state, else with one single-node call for every native Filter of the
// profile (kept for the plugins that ask next), else, when an earlier
// native plugin rejected it there, with a call for this plugin alone.
func (c *Cycle) fromDryRun(ctx context.Context, r *callResult, plugin string, ni fwk.NodeInfo) Answer {
	filterFallbacks.Inc()
	applies := r.applies()
	order := r.resp.GetPlugins()
	key := dryRunKey{node: ni.Node().Name, state: nodetable.StateOf(ni)}
	resp, hit := c.dryRuns.get(key)
	if !hit {
		var err error
		if resp, err = c.t.host.filterOne(ctx, c.profile, order, c.pod, ni, applies, c.pluginsTimeout(order)); err != nil {
			return Answer{Err: err, Timeout: c.t.policies.PluginTimeout(c.profile, plugin)}
		}
		c.dryRuns.put(key, resp)
	}
	if v, ok := verdictOf(resp, order, plugin); ok {
		return v
	}
	// An earlier native plugin rejected this NodeInfo, so the host did not
	// run this one. kube-scheduler stops at the first rejection and does
	// not get here; a caller that runs plugins on its own does, and gets
	// this plugin's own verdict.
	return c.singleNode(ctx, plugin, ni, applies)
}

// singleNode asks the host about one plugin on one NodeInfo.
func (c *Cycle) singleNode(ctx context.Context, plugin string, ni fwk.NodeInfo, applies appliesInfo) Answer {
	timeout := c.t.policies.PluginTimeout(c.profile, plugin)
	resp, err := c.t.host.filterOne(ctx, c.profile, []string{plugin}, c.pod, ni, applies, timeout)
	if err != nil {
		return Answer{Err: err, Timeout: timeout}
	}
	for _, u := range resp.GetUnfinished() {
		if u.GetPlugin() == plugin {
			return Answer{Unfinished: u.GetReason()}
		}
	}
	return Answer{Code: resp.GetCode(), Reason: resp.GetReason()}
}

// pluginsTimeout is the deadline of a call for `plugins`: the sum of their
// own, since the host stops each plugin at its own deadline.
func (c *Cycle) pluginsTimeout(plugins []string) (d time.Duration) {
	for _, p := range plugins {
		d += c.t.policies.PluginTimeout(c.profile, p)
	}
	return d
}
