package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
)

// preBindOutcome is the profile's PreBind call and the patch of the pod
// that applied its answer.
type preBindOutcome struct {
	resp     *pb.PreBindResponse
	patchErr error
}

// preBindPreFlight says the plugin's PreBind has work (the labels and
// annotations are only known from the call); Skip for a plugin without
// the hook (registered before the host could say).
func (p *Plugin) preBindPreFlight() *fwk.Status {
	if !p.hasHook(preBindPoint) {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// preBind is PreBind for a native plugin with the pre_bind hook: the
// profile's one PreBind call, made by its first such plugin, which also
// writes the labels and annotations the answer carries onto the pod, in
// one merge patch, before any plugin returns success.
func (p *Plugin) preBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (st *fwk.Status) {
	defer p.recoverStatus(ctx, "PreBind", &st)
	if !p.hasHook(preBindPoint) {
		return nil
	}
	a := podHooksOf(state, pod).preBindAnswer().get(func() (preBindOutcome, []string, time.Duration, error) {
		resp, plugins, timeout, err := callAtNode(ctx, p, state, pod, nodeName, preBindPoint, p.mgr.client.PreBind)
		out := preBindOutcome{resp: resp}
		if err == nil && resp.GetFailed() == nil {
			out.patchErr = p.patchPod(ctx, pod, resp)
		}
		return out, plugins, timeout, err
	})
	if st := p.answerStatus(ctx, preBindPoint, pod, a.err, a.timeout, a.resp.resp.GetFailed(), a.plugins); st != nil || a.err != nil {
		return st
	}
	if err := a.resp.patchErr; err != nil {
		return fwk.AsStatus(fmt.Errorf("native plugin(s) %s: PreBind could not write their labels and annotations on pod %s/%s%s: %w; the binding fails and the pod is retried",
			strings.Join(a.plugins, ", "), pod.Namespace, pod.Name, keysSetBy(a.resp.resp), err))
	}
	return nil
}

// keysSetBy is " (DeviceShare set annotation a, label b; Quota set label
// c)": which plugin set which key of the answer, so that a patch the API
// server refuses points at the plugin to fix; after eight keys the rest
// are counted. Empty when the host did not say (an older host).
func keysSetBy(resp *pb.PreBindResponse) string {
	const most = 8
	type entry struct{ kind, key, plugin string }
	var all []entry
	for _, f := range []struct {
		kind string
		kvs  []*pb.KeyValue
		by   []string
	}{{"annotation", resp.GetAnnotations(), resp.GetAnnotationsSetBy()}, {"label", resp.GetLabels(), resp.GetLabelsSetBy()}} {
		if len(f.by) != len(f.kvs) {
			return ""
		}
		for i, kv := range f.kvs {
			all = append(all, entry{f.kind, kv.GetKey(), f.by[i]})
		}
	}
	var plugins []string
	keys := map[string][]string{}
	for _, e := range all[:min(len(all), most)] {
		if _, seen := keys[e.plugin]; !seen {
			plugins = append(plugins, e.plugin)
		}
		keys[e.plugin] = append(keys[e.plugin], e.kind+" "+e.key)
	}
	if len(plugins) == 0 {
		return ""
	}
	parts := make([]string, 0, len(plugins))
	for _, p := range plugins {
		parts = append(parts, p+" set "+strings.Join(keys[p], ", "))
	}
	more := ""
	if len(all) > most {
		more = fmt.Sprintf("; %d more", len(all)-most)
	}
	return " (" + strings.Join(parts, "; ") + more + ")"
}

// patchPod writes the PreBind answer's labels and annotations onto the
// pod with one merge patch; nothing to write makes no API call.
func (p *Plugin) patchPod(ctx context.Context, pod *v1.Pod, resp *pb.PreBindResponse) error {
	if len(resp.GetLabels()) == 0 && len(resp.GetAnnotations()) == 0 {
		return nil
	}
	if p.handle == nil || p.handle.ClientSet() == nil {
		return errors.New("kube-scheduler gave the plugin no API client to write them with")
	}
	meta := map[string]map[string]string{}
	for field, kvs := range map[string][]*pb.KeyValue{"labels": resp.GetLabels(), "annotations": resp.GetAnnotations()} {
		if len(kvs) == 0 {
			continue
		}
		meta[field] = make(map[string]string, len(kvs))
		for _, kv := range kvs {
			meta[field][kv.GetKey()] = kv.GetValue()
		}
	}
	data, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	_, err = p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, data, metav1.PatchOptions{})
	podPatches.WithLabelValues(patchOutcome(err)).Inc()
	return err
}

func patchOutcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
