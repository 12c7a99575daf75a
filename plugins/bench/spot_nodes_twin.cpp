// SpotNodes (plugins/spot-nodes, Rust) written line for line with the C++
// layer, for plugins_bench: the same keys, hints, reasons, pod state and
// filter, so that the two benchmarks differ only in the language and its
// export layer. Not a sample plugin; nothing loads it but the bench.
#include <schedplug/plugin.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kPodAnnotation = "schedplug.io/interruptible";
constexpr std::string_view kNodeLabel = "node.kubernetes.io/capacity-type";
constexpr std::string_view kSpot = "spot";

class SpotNodesTwin {
 public:
  static constexpr uint64_t kEvents =
      SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;
  static constexpr uint64_t kHints =
      SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
      SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
      SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS |
      SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;

  std::vector<std::string> PodAnnotationKeys() const {
    return {std::string(kPodAnnotation)};
  }

  enum class PodState { kNo, kYes, kTypo };
  schedplug::Status BeginPod(const schedplug::Pod& pod, PodState& state,
                             schedplug::Gates& gates) const {
    const auto value = pod.annotation(kPodAnnotation);
    state = !value.has_value() || *value == "false" ? PodState::kNo
            : *value == "true"                      ? PodState::kYes
                                                    : PodState::kTypo;
    gates.filter = state != PodState::kYes;
    gates.score = state == PodState::kYes;
    return schedplug::Status::Success();
  }

  schedplug::Status Filter(const schedplug::Pod&, const schedplug::Node& node,
                           PodState state) const {
    if (state == PodState::kTypo) {
      return schedplug::Status::UnschedulableAndUnresolvable(bad_annotation_);
    }
    if (state == PodState::kNo && node.label(kNodeLabel) == kSpot) {
      return schedplug::Status::UnschedulableAndUnresolvable(spot_);
    }
    return schedplug::Status::Success();
  }

  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node& node,
                          PodState, int64_t& score) const {
    score = node.label(kNodeLabel) == kSpot ? 100 : 0;
    return schedplug::Status::Success();
  }

 private:
  schedplug::Reason spot_{
      "node(s) are spot capacity (label "
      "node.kubernetes.io/capacity-type=spot) and the pod is not "
      "interruptible"};
  schedplug::Reason bad_annotation_{
      "pod's annotation schedplug.io/interruptible must be \"true\" or "
      "\"false\""};
};

}  // namespace

SCHEDPLUG_PLUGIN(SpotNodesTwin, "SpotNodesTwin", "1.0.0")
