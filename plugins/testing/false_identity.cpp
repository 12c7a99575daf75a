// FalseIdentity: a test plugin that promises
// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY and breaks it (it treats pods
// whose name starts with "x" differently), so that kit_hints_test can show
// the kit catches the broken promise. Its arg "readNameIn" says where it
// reads the name: "filter" (the default: the filter rejects such pods) or
// "applies" (applies() skips them). Built outside plugins.d: never loaded
// by a host.
#include <schedplug/plugin.hpp>
#include <string>

namespace {

class FalseIdentity {
 public:
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                                     SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;

  explicit FalseIdentity(const schedplug::Args& args) {
    args.allow_only({"readNameIn"});
    in_applies_ = args.string("readNameIn", "filter") == "applies";
  }

  bool Applies(const schedplug::Pod& pod) const {
    return !(in_applies_ && starts_with_x(pod));
  }

  schedplug::Status Filter(const schedplug::Pod& pod,
                           const schedplug::Node&) const {
    if (!in_applies_ && starts_with_x(pod)) {
      return schedplug::Status::Unschedulable(
          "pod names starting with x are not welcome");
    }
    return schedplug::Status::Success();
  }

 private:
  static bool starts_with_x(const schedplug::Pod& pod) {
    return pod.name().starts_with("x");
  }
  bool in_applies_ = false;
};

}  // namespace

SCHEDPLUG_PLUGIN(FalseIdentity, "FalseIdentity", "1.0.0")
