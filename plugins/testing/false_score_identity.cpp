// FalseScoreIdentity: a test plugin that promises
// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY and breaks it (it treats pods
// whose name starts with "x" differently), so that kit_hints_test can show
// the kit catches the broken promise. Its score is 10 per pod on the node,
// which the promise allows. Its arg "readNameIn" says where it reads the
// name: "score" (the default: such pods get 50 more on every node) or
// "normalize" (NormalizeScore reverses their scores). Built outside
// plugins.d: never loaded by a host.
#include <algorithm>
#include <schedplug/plugin.hpp>
#include <span>
#include <string>

namespace {

class FalseScoreIdentity {
 public:
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;

  explicit FalseScoreIdentity(const schedplug::Args& args) {
    args.allow_only({"readNameIn"});
    in_normalize_ = args.string("readNameIn", "score") == "normalize";
  }

  schedplug::Status Score(const schedplug::Pod& pod,
                          const schedplug::Node& node, int64_t& score) const {
    score = 10 * static_cast<int64_t>(node.pod_count());
    if (!in_normalize_ && starts_with_x(pod)) score += 50;
    return schedplug::Status::Success();
  }

  schedplug::Status NormalizeScore(
      const schedplug::Pod& pod, std::span<schedplug_node_score> scores) const {
    for (schedplug_node_score& s : scores) {
      s.score = std::clamp<int64_t>(s.score, 0, 100);
      if (in_normalize_ && starts_with_x(pod)) s.score = 100 - s.score;
    }
    return schedplug::Status::Success();
  }

 private:
  static bool starts_with_x(const schedplug::Pod& pod) {
    return pod.name().starts_with("x");
  }
  bool in_normalize_ = false;
};

}  // namespace

SCHEDPLUG_PLUGIN(FalseScoreIdentity, "FalseScoreIdentity", "1.0.0")
