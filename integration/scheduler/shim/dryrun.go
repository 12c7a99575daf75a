package shim

import (
	"slices"
	"sync"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// Preemption dry runs and nominated-pod passes hand Filter NodeInfos that
// are not the snapshot's (a victim removed, a nominated pod added), so the
// PreFilter verdicts do not apply and the host must be asked about that
// exact NodeInfo. kube-scheduler then runs every Filter plugin on it in
// turn; asking the host once per native plugin cost one RPC per plugin per
// NodeInfo. One RPC now asks for all of the profile's native Filter
// plugins at once, and the answer waits in the cycle's filterState for the
// plugins that ask next about the same NodeInfo.

// dryRunKey names one NodeInfo state: removing or adding a pod gives the
// NodeInfo a new generation, so two dry-run states never share a key.
type dryRunKey struct {
	node  string
	state nodeState
}

// dryRunCacheCap bounds a cycle's answers (a preemption dry run visits each
// candidate node a few times); past it answers are simply not kept.
const dryRunCacheCap = 4096

// dryRunCache is shared by the CycleState clones of one cycle (filterState
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

// batchedVerdict is plugin `name`'s verdict in an answer for all of
// `order` (the host runs them in that order and stops at the first that
// does not succeed). ok is false when the answer says nothing about it:
// an earlier plugin rejected the node, so the host never ran it.
type batchedVerdict struct {
	code       pb.Code
	reason     string
	unfinished string // the host's reason when the plugin did not finish
}

func verdictOf(resp *pb.FilterResponse, order []string, name string) (batchedVerdict, bool) {
	for _, u := range resp.GetUnfinished() {
		if u.GetPlugin() == name {
			return batchedVerdict{unfinished: u.GetReason()}, true
		}
	}
	if resp.GetCode() == pb.Code_CODE_SUCCESS {
		return batchedVerdict{code: pb.Code_CODE_SUCCESS}, true
	}
	if resp.GetPlugin() == name {
		return batchedVerdict{code: resp.GetCode(), reason: resp.GetReason()}, true
	}
	at, rejecter := slices.Index(order, name), slices.Index(order, resp.GetPlugin())
	if at >= 0 && rejecter >= 0 && at < rejecter {
		return batchedVerdict{code: pb.Code_CODE_SUCCESS}, true
	}
	return batchedVerdict{}, false
}
