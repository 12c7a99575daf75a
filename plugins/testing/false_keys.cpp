// FalseKeys: a test plugin that promises
// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, declares the pod
// annotation key "team.io/tier" (which its filter reads: "none" is
// rejected), and breaks the promise, so that kit_hints_test can show the
// kit catches it. Its arg "undeclared" says what else it reads: "label"
// (the default: the filter rejects pods labelled app=batch, a label it did
// not declare) or "annotation" (applies() skips pods with the undeclared
// annotation "skip.io/me"). Built outside plugins.d: never loaded by a
// host.
#include <schedplug/plugin.hpp>
#include <string>
#include <vector>

namespace {

class FalseKeys {
 public:
  static constexpr uint64_t kHints =
      SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
      SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
      SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;

  explicit FalseKeys(const schedplug::Args& args) {
    args.allow_only({"undeclared"});
    in_applies_ = args.string("undeclared", "label") == "annotation";
  }

  std::vector<std::string> PodAnnotationKeys() const {
    return {"team.io/tier"};
  }

  bool Applies(const schedplug::Pod& pod) const {
    return !(in_applies_ && pod.annotation("skip.io/me").has_value());
  }

  schedplug::Status Filter(const schedplug::Pod& pod,
                           const schedplug::Node&) const {
    if (pod.annotation("team.io/tier") == "none") {
      return schedplug::Status::Unschedulable("pods of tier none wait");
    }
    if (!in_applies_ && pod.label("app") == "batch") {
      return schedplug::Status::Unschedulable("batch pods are not welcome");
    }
    return schedplug::Status::Success();
  }

 private:
  bool in_applies_ = false;
};

}  // namespace

SCHEDPLUG_PLUGIN(FalseKeys, "FalseKeys", "1.0.0")
