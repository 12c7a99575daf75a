// HwEncrypt: pods that ask for hardware encryption only fit on nodes that
// have it.
//
// A pod annotated `myorg.io/require-hw-encrypt: "true"` fits only nodes
// labelled `node.kubernetes.io/hw-encrypt: "true"`. Both keys are args;
// keys and values are matched exactly (case-sensitive), as Kubernetes does.
#include <schedplug/plugin.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kTrue = "true";
constexpr std::string_view kFalse = "false";

class HwEncrypt {
 public:
  // A node gains or loses the label, or a new node arrives: the only events
  // after which a rejected pod may fit.
  static constexpr uint64_t kEvents =
      SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;
  // Filter reads a label, never the node's pods: preemption dry runs may
  // reuse its PreFilter verdicts. BeginPod and Filter read neither the pod's
  // name nor its uid, and there is no Refresh: the next replica of a pod may
  // reuse them too. Of the pod's labels and annotations they read only the
  // annotation `podAnnotation` (PodAnnotationKeys): pods that differ only
  // in other labels and annotations may reuse them as well.
  static constexpr uint64_t kHints =
      SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
      SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
      SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;

  explicit HwEncrypt(const schedplug::Args& args) {
    args.allow_only({"podAnnotation", "nodeLabel"});
    pod_annotation_ =
        args.string("podAnnotation", "myorg.io/require-hw-encrypt");
    node_label_ = args.string("nodeLabel", "node.kubernetes.io/hw-encrypt");
    // Built once, returned without copying: shown as
    // "0/5 nodes are available: 3 <reason>."
    lacks_encryption_ =
        schedplug::Reason("node(s) didn't have hardware encryption (label " +
                          node_label_ + "=true)");
    bad_annotation_ = schedplug::Reason("pod's annotation " + pod_annotation_ +
                                        " must be \"true\" or \"false\"");
  }

  // The pod's labels and annotations BeginPod and Filter read
  // (SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS): the annotation alone.
  std::vector<std::string> PodAnnotationKeys() const {
    return {pod_annotation_};
  }

  // Once per pod (not per node): read the annotation. Most pods carry
  // none: their Filter is skipped on every node. "false" opts out
  // explicitly; anything else but "true" is a typo, and the pod asked for
  // something, so it fails closed instead of landing on an unencrypted node.
  enum class PodState { kWantsEncryption, kBadAnnotation };
  schedplug::Status BeginPod(const schedplug::Pod& pod, PodState& state,
                             schedplug::Gates& gates) const {
    const auto value = pod.annotation(pod_annotation_);
    if (!value.has_value() || *value == kFalse) {
      gates.filter = false;
    } else {
      state = *value == kTrue ? PodState::kWantsEncryption
                              : PodState::kBadAnnotation;
    }
    return schedplug::Status::Success();
  }

  schedplug::Status Filter(const schedplug::Pod&, const schedplug::Node& node,
                           PodState state) const {
    if (state == PodState::kBadAnnotation) {
      return schedplug::Status::UnschedulableAndUnresolvable(bad_annotation_);
    }
    if (node.label(node_label_) == kTrue) return schedplug::Status::Success();
    // Preempting pods cannot give a node hardware encryption.
    return schedplug::Status::UnschedulableAndUnresolvable(lacks_encryption_);
  }

 private:
  std::string pod_annotation_;
  std::string node_label_;
  schedplug::Reason lacks_encryption_;
  schedplug::Reason bad_annotation_;
};

}  // namespace

SCHEDPLUG_PLUGIN(HwEncrypt, "HwEncrypt", "1.0.0")
