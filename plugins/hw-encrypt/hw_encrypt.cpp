// HwEncrypt: pods that ask for hardware encryption only fit on nodes that
// have it.
//
// A pod annotated `myorg.io/require-hw-encrypt: "true"` fits only nodes
// labelled `node.kubernetes.io/hw-encrypt: "true"`. Both keys are args;
// keys and values are matched exactly (case-sensitive), as Kubernetes does.
#include <schedplug/plugin.hpp>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kTrue = "true";
constexpr std::string_view kFalse = "false";

class HwEncrypt {
 public:
  // A node gains or loses the label, or a new node arrives: the only events
  // after which a rejected pod may fit.
  static constexpr uint64_t kEvents =
      SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;

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

  // Most pods carry no annotation: one binary search and they skip Filter
  // on every node. "false" opts out explicitly.
  bool Applies(const schedplug::Pod& pod) const {
    const auto value = pod.annotation(pod_annotation_);
    return value.has_value() && *value != kFalse;
  }

  schedplug::Status Filter(const schedplug::Pod& pod,
                           const schedplug::Node& node) const {
    const auto wanted = pod.annotation(pod_annotation_);
    if (!wanted.has_value() || *wanted == kFalse) {
      return schedplug::Status::Success();  // correct even without Applies
    }
    // Anything else but "true" is a typo; the pod asked for something, so
    // fail closed instead of placing it on an unencrypted node.
    if (*wanted != kTrue) {
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
