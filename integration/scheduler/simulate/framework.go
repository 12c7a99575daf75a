package simulate

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// observe has kube-scheduler tell hist what each cycle found, and makes its
// choice among equally scored nodes repeatable (history.decide).
func observe(sched *scheduler.Scheduler, hist *history, cl *cluster) {
	for name, f := range sched.Profiles {
		sched.Profiles[name] = &observedFramework{Framework: f, history: hist}
	}
	schedulePod := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		result, err := schedulePod(ctx, f, state, podInfo)
		if err == nil {
			result.SuggestedHost = hist.decide(podInfo.Pod, result.SuggestedHost, result.FeasibleNodes, result.EvaluatedNodes, podInfo.Attempts)
		}
		return result, err
	}
	handleFailure := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominating *fwk.NominatingInfo, start time.Time) {
		hist.failed(podInfo.Pod, status, nominating, podInfo.Attempts)
		handleFailure(ctx, f, podInfo, status, nominating, start)
		if !status.IsRejected() {
			// kube-scheduler would retry the pod for good; the simulation
			// reports the error and takes the pod out of the queue.
			pod := podInfo.Pod
			_ = cl.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
		}
	}
}

// observedFramework is a profile's framework as kube-scheduler built it,
// telling the history what each scheduling cycle found: PreFilter's
// verdict, each node's Filter status, the scores. Every call goes to the
// framework unchanged.
type observedFramework struct {
	framework.Framework
	history *history
}

func (f *observedFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	result, status, rejectors := f.Framework.RunPreFilterPlugins(ctx, state, pod)
	f.history.begin(pod, state, status)
	return result, status, rejectors
}

func (f *observedFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	status := f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	f.history.filtered(pod, info.Node().Name, status)
	return status
}

func (f *observedFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	if status.IsSuccess() {
		f.history.scored(pod, scores)
	}
	return scores, status
}
