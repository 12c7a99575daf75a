// SpareCpu: keep some CPU spare on every node, and prefer the nodes with the
// most CPU left once the pod is placed.
#include <schedplug/plugin.hpp>
#include <string>

class SpareCpu {
 public:
  // Score returns raw millicores; the host maps them onto [0, 100].
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_LINEAR;

  explicit SpareCpu(const schedplug::Args& args) {
    args.allow_only({"headroomMillicores"});
    headroom_ = args.integer("headroomMillicores", 500, 0, 1'000'000);
  }

  schedplug::Status Filter(const schedplug::Pod& pod,
                           const schedplug::Node& node) const {
    if (spare(pod, node) >= headroom_) return schedplug::Status::Success();
    return schedplug::Status::Unschedulable("node(s) would keep less than " +
                                            std::to_string(headroom_) +
                                            "m CPU spare");
  }

  schedplug::Status Score(const schedplug::Pod& pod,
                          const schedplug::Node& node, int64_t& score) const {
    score = spare(pod, node);
    return schedplug::Status::Success();
  }

 private:
  static int64_t spare(const schedplug::Pod& pod, const schedplug::Node& node) {
    return node.free("cpu") - pod.request("cpu");
  }
  int64_t headroom_ = 0;
};

SCHEDPLUG_PLUGIN(SpareCpu, "SpareCpu", "0.1.0")
