package cycle

import (
	v1 "k8s.io/api/core/v1"

	pb "schedplug.dev/integration/scheduler/gen/schedplugv1"
	"schedplug.dev/integration/scheduler/shim/abi"
	"schedplug.dev/integration/scheduler/shim/wire"
)

// Signatures for kube-scheduler's opportunistic batching (KEP-5598): the
// scheduler reuses the last cycle's ranking of feasible nodes for the next
// pod with an equal signature, re-running Filter on the chosen node and the
// hinted one. That is sound for a native plugin whose answers depend only on
// what the signature holds, so a plugin signs only what its declarations
// cover, one plugin at a time.

// Why a native plugin refuses to sign a pod, as kube-scheduler logs it
// (at verbosity 5) with the pod.
const (
	// SignRefusedUnknown: no handshake yet, so the plugin's declarations
	// are not known.
	SignRefusedUnknown = "schedplug: the plugin's declarations are not known yet (schedplug-host not reached); the pod is scheduled without batching"
	// SignRefusedScore: the plugin's Score may read the pod's name, uid
	// or changing state, so the last cycle's scores may not stand for
	// this pod's.
	SignRefusedScore = "schedplug: the plugin's Score does not declare SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY; the pod is scheduled without batching"
	// SignRefusedIdentity: the plugin's Filter may read the pod's name,
	// uid or changing state.
	SignRefusedIdentity = "schedplug: the plugin's Filter does not declare SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY; the pod is scheduled without batching"
	// SignRefusedCaught: a spot check caught this build of the plugin
	// breaking a promise (spotcheck.go).
	SignRefusedCaught = "schedplug: a spot check caught this build of the plugin breaking a promise it declared (see the shim's log); the pod is scheduled without batching until the plugin's .so changes"
)

// PluginSignature is the signature fragment of the native plugin described
// by info for pod: the pod as the plugin sees it (only the data it
// declared) without name and uid, with only its declared label and
// annotation keys when it declared them and has no Score, and the plugin's
// build (a swapped .so signs differently). A Filter signs with
// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, a Score with
// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a plugin with both with both.
// refused is the reason when the plugin cannot sign; a plugin with neither
// Filter nor Score signs nothing ("", "").
func PluginSignature(info *pb.PluginInfo, pod *v1.Pod) (sig, refused string) {
	switch {
	case info == nil:
		return "", SignRefusedUnknown
	case !info.GetHasFilter() && !info.GetHasScore():
		return "", ""
	case info.GetHasFilter() && info.GetHints()&abi.HintFilterIgnoresPodIdentity == 0:
		return "", SignRefusedIdentity
	case info.GetHasScore() && info.GetHints()&abi.HintScoreIgnoresPodIdentity == 0:
		return "", SignRefusedScore
	}
	// The declared keys cover applies, pod_begin and filter, not score
	// (plugin.h): a plugin that scores signs every label and annotation.
	var keys *podKeys
	if !info.GetHasScore() && info.GetHints()&abi.HintFilterReadsDeclaredPodKeys != 0 {
		keys = &podKeys{labels: info.GetPodLabelKeys(), annotations: info.GetPodAnnotationKeys()}
	}
	return info.GetSha256() + ":" + podSignature(wire.Pod(pod, info.GetData()), keys), ""
}
