package perf

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/testbed/twin"
)

// The extender variant: the Go twins' rules served over HTTP as a
// kube-scheduler extender, the way to add a Filter without forking the
// scheduler before schedplug. kube-scheduler sends it the pod and every
// node that passed its own Filter plugins as JSON (nodeCacheCapable:
// false, so the extender needs no informer of its own) and reads back the
// nodes that pass.

// hwEncrypt, dedicated and latency are the rules with the sample plugins'
// default args (and the suite's latency file), as the twin and native
// variants run them.
type extender struct {
	hwEncrypt twin.HwEncryptRules
	dedicated twin.DedicatedNodesRules
	latency   twin.NetworkLatencyRules
}

var (
	extenderOnce sync.Once
	extenderSrv  *httptest.Server
)

// extenderURL starts the extender on a loopback port the first time and
// returns its URL; it serves every extender run of the test process.
func extenderURL() string {
	extenderOnce.Do(func() {
		latency, err := twin.NewNetworkLatencyRules(latencyFileText, latencyFile, twin.DefaultLatencyMs)
		if err != nil {
			panic(err) // the suite's own constant
		}
		e := &extender{
			hwEncrypt: twin.NewHwEncryptRules(twin.HwEncryptArgs{}),
			dedicated: twin.NewDedicatedNodesRules(twin.DedicatedNodesArgs{}),
			latency:   latency,
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/filter", e.serveFilter)
		mux.HandleFunc("/prioritize", e.servePrioritize)
		extenderSrv = httptest.NewServer(mux)
	})
	return extenderSrv.URL
}

func (e *extender) serveFilter(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	var result *extenderv1.ExtenderFilterResult
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		result = &extenderv1.ExtenderFilterResult{Error: fmt.Sprintf("schedplug perf extender: cannot decode the filter request: %v", err)}
	} else {
		result = e.filter(&args)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(result); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// filter applies HwEncrypt (only to pods it applies to, as its PreFilter
// skips the others) and then DedicatedNodes to every node sent.
func (e *extender) filter(args *extenderv1.ExtenderArgs) *extenderv1.ExtenderFilterResult {
	out := &extenderv1.ExtenderFilterResult{
		Nodes:                      &v1.NodeList{},
		FailedNodes:                extenderv1.FailedNodesMap{},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{},
	}
	if args.Pod == nil || args.Nodes == nil {
		out.Error = "schedplug perf extender: the request has no pod or no nodes (the extender is configured with nodeCacheCapable: false)"
		return out
	}
	annotations := args.Pod.Annotations
	hw := e.hwEncrypt.Applies(annotations)
	for i := range args.Nodes.Items {
		node := &args.Nodes.Items[i]
		v := twin.Verdict{Code: fwk.Success}
		if hw {
			v = e.hwEncrypt.Filter(annotations, node.Labels)
		}
		if v.Code == fwk.Success {
			v = e.dedicated.Filter(annotations, node.Labels)
		}
		switch v.Code {
		case fwk.Success:
			out.Nodes.Items = append(out.Nodes.Items, *node)
		case fwk.UnschedulableAndUnresolvable:
			out.FailedAndUnresolvableNodes[node.Name] = strings.Join(v.Reasons, "; ")
		default:
			out.FailedNodes[node.Name] = strings.Join(v.Reasons, "; ")
		}
	}
	return out
}

func (e *extender) servePrioritize(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		// The prioritize reply has no error field: an HTTP error makes
		// kube-scheduler log it and go on without the extender's scores.
		http.Error(w, fmt.Sprintf("schedplug perf extender: cannot decode the prioritize request: %v", err), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(e.prioritize(&args)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// prioritize scores the nodes by NetworkLatency's rules: latency looked
// up per node, reversed min-max to [0, 100], then scaled to the extender
// range [0, MaxExtenderPriority] (kube-scheduler scales it back by
// MaxNodeScore / MaxExtenderPriority and the extender's weight).
func (e *extender) prioritize(args *extenderv1.ExtenderArgs) *extenderv1.HostPriorityList {
	out := extenderv1.HostPriorityList{}
	if args.Nodes == nil {
		return &out
	}
	raw := make([]int64, len(args.Nodes.Items))
	for i := range args.Nodes.Items {
		raw[i] = e.latency.Score(args.Nodes.Items[i].Name)
	}
	e.latency.Normalize(raw)
	for i := range args.Nodes.Items {
		out = append(out, extenderv1.HostPriority{Host: args.Nodes.Items[i].Name, Score: raw[i] * extenderv1.MaxExtenderPriority / fwk.MaxNodeScore})
	}
	return &out
}
