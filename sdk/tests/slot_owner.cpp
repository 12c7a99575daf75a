// SlotOwner, a test plugin for the kit's hooks of plugins that own a
// resource (ABI v1.6). A node has the slots its label
// slots.example.com/count says; a pod wants the slots its annotation
// slots.example.com/want says (none: Skip). Reserve takes the lowest free
// indices, Unreserve gives them back, PreBind writes them as a label
// ("0-1") and an annotation ("0,1"). Permit makes a pod with the
// annotation slots.example.com/gang: "<m>" wait until m such pods wait,
// then allows the others. PreEnqueue keeps out pods annotated
// slots.example.com/hold.
//
// Built with SLOT_OWNER_CARELESS it makes the mistakes the kit must
// report: Unreserve frees some reservation on the node for any pod, PreBind
// writes the label "0,1" (a comma: not a label value) and Permit waits 20
// minutes (kit_hooks_test.cpp, kit_hooks_test.c).
#include <chrono>
#include <map>
#include <mutex>
#include <schedplug/plugin.hpp>
#include <set>
#include <string>
#include <vector>

namespace {

int64_t number(std::optional<std::string_view> text) {
  if (!text.has_value()) return 0;
  int64_t n = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string joined(const std::vector<int64_t>& slots, char sep) {
  std::string out;
  for (int64_t s : slots) {
    if (!out.empty()) out += sep;
    out += std::to_string(s);
  }
  return out;
}

}  // namespace

class SlotOwner {
 public:
  SlotOwner(const schedplug::Args&, const schedplug::Host& host)
      : host_(host) {}

  schedplug::Status Filter(const schedplug::Pod& pod,
                           const schedplug::Node& node) const {
    const int64_t want = number(pod.annotation("slots.example.com/want"));
    if (want == 0) return schedplug::Status::Skip();
    std::lock_guard lock(mu_);
    if (free_on(node).size() >= static_cast<size_t>(want)) {
      return schedplug::Status::Success();
    }
    return schedplug::Status::Unschedulable("node(s) had too few free slots");
  }

  schedplug::Status Reserve(const schedplug::Pod& pod,
                            const schedplug::Node& node) {
    const int64_t want = number(pod.annotation("slots.example.com/want"));
    if (want == 0) return schedplug::Status::Skip();
    std::lock_guard lock(mu_);
    std::vector<int64_t> free = free_on(node);
    if (free.size() < static_cast<size_t>(want)) {
      return schedplug::Status::Unschedulable("node(s) had too few free slots");
    }
    free.resize(static_cast<size_t>(want));
    held_[std::string(pod.uid())] = {std::string(node.name()), free};
    return schedplug::Status::Success();
  }

  void Unreserve(const schedplug::Pod& pod, const schedplug::Node& node) {
    std::lock_guard lock(mu_);
#ifdef SLOT_OWNER_CARELESS
    // Frees a reservation on the node, the pod's or any other.
    (void)pod;
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (it->second.node == node.name()) {
        held_.erase(it);
        break;
      }
    }
#else
    (void)node;
    held_.erase(std::string(pod.uid()));
#endif
  }

  schedplug::Status Permit(const schedplug::Pod& pod, const schedplug::Node&) {
    const int64_t gang = number(pod.annotation("slots.example.com/gang"));
    if (gang == 0) return schedplug::Status::Success();
    std::lock_guard lock(mu_);
    if (waiting_.size() + 1 < static_cast<size_t>(gang)) {
      waiting_.emplace_back(pod.uid());
#ifdef SLOT_OWNER_CARELESS
      return schedplug::Status::Wait(std::chrono::minutes(20));
#else
      return schedplug::Status::Wait(std::chrono::seconds(30));
#endif
    }
    for (const std::string& uid : waiting_) host_.PermitAllow(uid);
    waiting_.clear();
    return schedplug::Status::Success();
  }

  schedplug::Status PreBind(const schedplug::Pod& pod, const schedplug::Node&,
                            schedplug::PodPatch& patch) {
    std::lock_guard lock(mu_);
    const auto it = held_.find(std::string(pod.uid()));
    if (it == held_.end()) {
      return number(pod.annotation("slots.example.com/want")) == 0
                 ? schedplug::Status::Skip()
                 : schedplug::Status::Error("no slots reserved for the pod");
    }
#ifdef SLOT_OWNER_CARELESS
    const char label_sep = ',';
#else
    const char label_sep = '-';
#endif
    if (auto s = patch.SetLabel("slots.example.com/assigned",
                                joined(it->second.slots, label_sep));
        !s.ok()) {
      return s;
    }
    return patch.SetAnnotation("slots.example.com/assigned",
                               joined(it->second.slots, ','));
  }

  schedplug::Status PreEnqueue(const schedplug::Pod& pod) const {
    if (pod.annotation("slots.example.com/hold").has_value()) {
      return schedplug::Status::UnschedulableAndUnresolvable(
          "pod is held (slots.example.com/hold)");
    }
    return schedplug::Status::Success();
  }

 private:
  struct Held {
    std::string node;
    std::vector<int64_t> slots;
  };
  // The node's free slot indices, lowest first (mu_ held).
  std::vector<int64_t> free_on(const schedplug::Node& node) const {
    std::set<int64_t> used;
    for (const auto& [uid, held] : held_) {
      if (held.node == node.name())
        used.insert(held.slots.begin(), held.slots.end());
    }
    const int64_t count = number(node.label("slots.example.com/count"));
    std::vector<int64_t> free;
    for (int64_t i = 0; i < count; ++i) {
      if (used.count(i) == 0) free.push_back(i);
    }
    return free;
  }

  schedplug::Host host_;
  mutable std::mutex mu_;
  std::map<std::string, Held> held_;  // by pod uid
  std::vector<std::string> waiting_;
};

SCHEDPLUG_PLUGIN(SlotOwner, "SlotOwner", "1.0.0")
