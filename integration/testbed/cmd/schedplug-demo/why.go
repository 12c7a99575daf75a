package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"schedplug.dev/integration/testbed/testenv"
)

// printWhy says, for each pod, why the native plugins sent it where it
// went or nowhere, from what the running host kept of the pod's last cycle
// (`schedplug explain`), not recomputed: for a placed pod the chosen node's
// native scores beside the runner-up's; for a Pending pod each node's
// native rejection, and the nodes that passed every native filter.
func printWhy(w io.Writer, hostAddress string, c *cluster, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tWHY, per native plugin (from schedplug-host's recent cycles: `schedplug explain`)")
	// What became of a cycle reaches the host a moment after kube-scheduler
	// decides it; the pods are settled by now, so this is a short wait.
	deadline := time.Now().Add(5 * time.Second)
	for i, p := range c.scheduled {
		got, err := explainSettled(hostAddress, p.namespace+"/"+p.name, deadline)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\n", p.label(), whyLine(got, rows[i].node, c))
	}
	return tw.Flush()
}

// explainSettled is what the host kept of pod once its latest cycle's
// outcome is reported, or as it is at the deadline.
func explainSettled(hostAddress, pod string, deadline time.Time) (*testenv.Explain, error) {
	for {
		got, _, err := testenv.RunExplain(hostAddress, pod)
		if err != nil {
			return nil, err
		}
		if n := len(got.Cycles); n == 0 || got.Cycles[n-1].Outcome != "not reported" || time.Now().After(deadline) {
			return got, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func whyLine(e *testenv.Explain, node string, c *cluster) string {
	if len(e.Cycles) == 0 {
		return "no cycle held: " + e.NotHeld
	}
	last := e.Cycles[len(e.Cycles)-1]
	switch {
	case last.Outcome == "unschedulable", node == "Pending":
		return pendingWhy(last, c)
	case last.ChosenNode != "":
		node = last.ChosenNode
	}
	var chosen, runnerUp *testenv.ExplainNode
	for i := range last.Explain {
		n := &last.Explain[i]
		if len(n.Scores) == 0 {
			continue
		}
		if n.Node == node {
			chosen = n
		} else if runnerUp == nil || n.Total > runnerUp.Total {
			runnerUp = n
		}
	}
	if chosen == nil {
		return node + ": not scored by native plugins (no native Score plugin, or the only feasible node: kube-scheduler scores only when more than one is)"
	}
	out := node + ": " + scoresText(chosen)
	if runnerUp != nil {
		out += "; runner-up " + runnerUp.Node + ": " + scoresText(runnerUp)
	}
	return out
}

// scoresText: "NetworkLatency 100 x5" per native scorer, and the total.
func scoresText(n *testenv.ExplainNode) string {
	var parts []string
	for _, s := range n.Scores {
		if s.Skipped {
			parts = append(parts, s.Plugin+" skipped")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d x%d", s.Plugin, s.Normalized, s.Weight))
	}
	return fmt.Sprintf("%s = %d", strings.Join(parts, " + "), n.Total)
}

// pendingWhy: the nodes of each native rejection, then those that passed
// every native filter, which kube-scheduler's in-tree filters turned down.
func pendingWhy(cycle testenv.ExplainCycle, c *cluster) string {
	rejected := map[string]bool{}
	var parts []string
	for _, r := range cycle.Rejections {
		nodes := append([]string(nil), r.Nodes...)
		sort.Strings(nodes)
		for _, n := range nodes {
			rejected[n] = true
		}
		parts = append(parts, strings.Join(nodes, ", ")+": "+r.Plugin+": "+r.Reason)
	}
	sort.Strings(parts)
	var passed []string
	for _, n := range c.nodeRows {
		if !rejected[n.name] {
			passed = append(passed, n.name)
		}
	}
	if len(passed) > 0 {
		parts = append(parts, strings.Join(passed, ", ")+": passed every native filter (in-tree plugins turned them down, see above)")
	}
	if len(parts) == 0 {
		return "no native plugin rejected a node"
	}
	return strings.Join(parts, "; ")
}
