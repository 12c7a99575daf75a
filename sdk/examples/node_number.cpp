// NodeNumber: the kube-scheduler-wasm-extension example (examples/nodenumber)
// ported literally. It favours nodes whose name ends in the same digit as
// the pod's spec.nodeName: such a node scores 10, any other 0, and a pod
// whose spec.nodeName does not end in a digit matches every node. Arg
// `reverse: true` inverts the match.
#include <optional>
#include <schedplug/plugin.hpp>
#include <string_view>

class NodeNumber {
 public:
  static constexpr uint64_t kEvents = SCHEDPLUG_EVENT_NODE_ADD;
  // spec.nodeName is sent only to plugins that ask for it.
  static constexpr uint64_t kData = SCHEDPLUG_DATA_POD_NODE_NAME;
  // The pod's suffix number, computed once per pod (PreScore in the original).
  using PodState = std::optional<uint8_t>;

  explicit NodeNumber(const schedplug::Args& args) {
    args.allow_only({"reverse"});
    reverse_ = args.boolean("reverse", false);
  }

  schedplug::Status BeginPod(const schedplug::Pod& pod, PodState& podnum,
                             schedplug::Gates&) const {
    podnum = last_number(pod.node_name());
    return schedplug::Status::Success();
  }

  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node& node,
                          const PodState& podnum, int64_t& score) const {
    // No suffix number on the pod matches every node.
    bool match = !podnum || last_number(node.name()) == podnum;
    if (reverse_) match = !match;
    score = match ? 10 : 0;
    return schedplug::Status::Success();
  }

 private:
  // The last character of `s` as a number, or nullopt.
  static std::optional<uint8_t> last_number(std::string_view s) {
    if (s.empty() || s.back() < '0' || s.back() > '9') return std::nullopt;
    return static_cast<uint8_t>(s.back() - '0');
  }
  bool reverse_ = false;
};

SCHEDPLUG_PLUGIN(NodeNumber, "NodeNumber", "0.1.0")
