package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"schedplug.dev/integration/testbed/testenv"
)

// printWhy says, for each pod, why the native plugins sent it where it
// went or nowhere, from the running host's record of the pod's last cycle
// (`schedplug explain`), not recomputed: for a placed pod the chosen node's
// native scores beside the runner-up's; for a Pending pod each node's
// native rejection, and the nodes that passed every native filter.
func printWhy(w io.Writer, hostAddress string, c *cluster, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tWHY, per native plugin (from schedplug-host's record: `schedplug explain`)")
	for i, p := range c.scheduled {
		got, _, err := testenv.RunExplain(hostAddress, p.namespace+"/"+p.name)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\n", p.label(), whyLine(got, rows[i].node, c))
	}
	return tw.Flush()
}

func whyLine(e *testenv.Explain, node string, c *cluster) string {
	if len(e.Cycles) == 0 {
		return "no cycle held: " + e.NotHeld
	}
	last := e.Cycles[len(e.Cycles)-1]
	if node == "Pending" {
		return pendingWhy(last, c)
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
		return node + ": not scored by native plugins (no native Score plugin, or the only feasible node)"
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

func pendingWhy(cycle testenv.ExplainCycle, c *cluster) string {
	// Nodes grouped by the plugin and reason that rejected them.
	rejected := map[string]bool{}
	byReason := map[string][]string{}
	for _, n := range cycle.Explain {
		if n.Feasible {
			continue
		}
		rejected[n.Node] = true
		for _, f := range n.Filters {
			if f.Verdict != "Success" && f.Verdict != "Skipped" && f.Verdict != "NotRun" {
				key := f.Plugin + ": " + f.Reason
				byReason[key] = append(byReason[key], n.Node)
			}
		}
	}
	var parts []string
	for reason, nodes := range byReason {
		sort.Strings(nodes)
		parts = append(parts, strings.Join(nodes, ", ")+": "+reason)
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
