package simulate

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// recordingFramework is a profile's framework as kube-scheduler built it,
// telling the record what each scheduling cycle found: PreFilter's
// verdict, each node's Filter status, the scores. Every call goes to the
// framework unchanged.
type recordingFramework struct {
	framework.Framework
	record *record
}

func (f *recordingFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	result, status, rejectors := f.Framework.RunPreFilterPlugins(ctx, state, pod)
	f.record.begin(pod, state, status)
	return result, status, rejectors
}

func (f *recordingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	status := f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	f.record.filtered(pod, info.Node().Name, status)
	return status
}

func (f *recordingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	if status.IsSuccess() {
		f.record.scored(pod, scores)
	}
	return scores, status
}
