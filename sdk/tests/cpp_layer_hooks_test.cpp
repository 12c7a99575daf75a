// The C++ layer's hooks for plugins that own a resource (ABI v1.6):
// Reserve, Unreserve, Permit, PreBind, PreEnqueue, PodPatch and the permit
// services, called through the C descriptor as the host calls them.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <schedplug/plugin.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using schedplug::Host;
using schedplug::Node;
using schedplug::Pod;
using schedplug::PodPatch;
using schedplug::Status;
using schedplug::detail::make_descriptor;
using namespace std::chrono_literals;

struct Buffer {
  std::array<char, SCHEDPLUG_REASON_MAX> text{};
  schedplug_reason r{text.data(), text.size()};
  std::string str() const { return text.data(); }
};

// What a host keeps: the log, the permit decisions, a pod's patch.
struct FakeHost {
  std::vector<std::string> logs;
  std::vector<std::string> decisions;  // "allow <uid>", "reject <uid>: why"
  schedplug_code answer = SCHEDPLUG_SUCCESS;
  schedplug_host host{};

  explicit FakeHost(uint32_t size = sizeof(schedplug_host)) {
    host.struct_size = size;
    host.context = this;
    host.log = [](void* c, schedplug_log_level, schedplug_str m) {
      static_cast<FakeHost*>(c)->logs.emplace_back(m.data, m.len);
    };
    host.permit_allow = [](void* c, schedplug_str uid) {
      auto* self = static_cast<FakeHost*>(c);
      self->decisions.push_back("allow " + std::string(uid.data, uid.len));
      return self->answer;
    };
    host.permit_reject = [](void* c, schedplug_str uid, schedplug_str why) {
      auto* self = static_cast<FakeHost*>(c);
      self->decisions.push_back("reject " + std::string(uid.data, uid.len) +
                                ": " + std::string(why.data, why.len));
      return self->answer;
    };
  }
};

// A patch that takes at most `room` entries.
struct FakePatch {
  std::map<std::string, std::string> labels, annotations;
  size_t room = SCHEDPLUG_POD_PATCH_MAX;
  schedplug_pod_patch patch{sizeof(schedplug_pod_patch), 0, this,
                            &FakePatch::annotation, &FakePatch::label};
  static schedplug_code put(void* c, std::map<std::string, std::string>& m,
                            schedplug_str k, schedplug_str v) {
    auto* self = static_cast<FakePatch*>(c);
    if (self->labels.size() + self->annotations.size() >= self->room) {
      return SCHEDPLUG_ERROR;
    }
    m[std::string(k.data, k.len)] = std::string(v.data, v.len);
    return SCHEDPLUG_SUCCESS;
  }
  static schedplug_code annotation(void* c, schedplug_str k, schedplug_str v) {
    return put(c, static_cast<FakePatch*>(c)->annotations, k, v);
  }
  static schedplug_code label(void* c, schedplug_str k, schedplug_str v) {
    return put(c, static_cast<FakePatch*>(c)->labels, k, v);
  }
};

struct PodAndNode {
  schedplug_pod pod{};
  schedplug_node node{};
  explicit PodAndNode(const char* uid, const char* name = "web-1") {
    pod.struct_size = sizeof pod;
    pod.namespace_name = schedplug_str_of("ns");
    pod.name = schedplug_str_of(name);
    pod.uid = schedplug_str_of(uid);
    node.struct_size = sizeof node;
    node.name = schedplug_str_of("node-1");
  }
};

// Hands out one slot per node to each pod, and lets the pod that fills the
// last slot allow the ones waiting (as coscheduling does). Non-const hooks
// under the class's own lock.
class Slots {
 public:
  Slots(const schedplug::Args& args, const Host& host)
      : host_(host), slots_(args.integer("slots", 1, 1, 100)) {}

  Status Filter(const Pod&, const Node&) const {
    std::lock_guard lock(mu_);
    return taken_.size() < static_cast<size_t>(slots_)
               ? Status::Success()
               : Status::Unschedulable("node(s) had no free slot");
  }
  Status Reserve(const Pod& pod, const Node&) {
    std::lock_guard lock(mu_);
    if (taken_.size() >= static_cast<size_t>(slots_)) {
      return Status::Unschedulable("node(s) had no free slot");
    }
    taken_[std::string(pod.uid())] = taken_.size();
    return Status::Success();
  }
  void Unreserve(const Pod& pod, const Node&) {
    std::lock_guard lock(mu_);
    taken_.erase(std::string(pod.uid()));
  }
  Status Permit(const Pod& pod, const Node&) {
    std::lock_guard lock(mu_);
    if (taken_.size() < static_cast<size_t>(slots_)) {
      waiting_.emplace_back(pod.uid());
      return Status::Wait(30s);
    }
    for (const std::string& uid : waiting_) host_.PermitAllow(uid);
    waiting_.clear();
    return Status::Success();
  }
  Status PreBind(const Pod& pod, const Node&, PodPatch& patch) {
    std::lock_guard lock(mu_);
    auto it = taken_.find(std::string(pod.uid()));
    if (it == taken_.end()) return Status::Error("no slot reserved");
    const std::string slot = std::to_string(it->second);
    if (Status s = patch.SetLabel("slots.example.com/slot", slot); !s.ok()) {
      return s;
    }
    return patch.SetAnnotation("slots.example.com/slot", slot);
  }
  Status PreEnqueue(const Pod& pod) const {
    if (pod.annotations().get("slots.example.com/hold").has_value()) {
      return Status::UnschedulableAndUnresolvable("pod is held");
    }
    return Status::Success();
  }

 private:
  Host host_;
  int64_t slots_;
  mutable std::mutex mu_;
  std::map<std::string, size_t> taken_;
  std::vector<std::string> waiting_;
};

struct FilterOnly {
  Status Filter(const Pod&, const Node&) const { return Status::Success(); }
};

void* create(const schedplug_plugin& d, const schedplug_host* host,
             const char* args = "{}") {
  void* inst = nullptr;
  Buffer err;
  EXPECT_EQ(d.create(args, std::strlen(args), host, &inst, &err.r),
            SCHEDPLUG_SUCCESS)
      << err.str();
  return inst;
}

TEST(Hooks, OnlyTheClassesHooksAreSet) {
  constexpr schedplug_plugin d = make_descriptor<Slots>("Slots", "1");
  EXPECT_EQ(d.struct_size, sizeof(schedplug_plugin));
  EXPECT_NE(d.reserve, nullptr);
  EXPECT_NE(d.unreserve, nullptr);
  EXPECT_NE(d.permit, nullptr);
  EXPECT_NE(d.pre_bind, nullptr);
  EXPECT_NE(d.pre_enqueue, nullptr);
  constexpr schedplug_plugin f = make_descriptor<FilterOnly>("FilterOnly", "1");
  EXPECT_EQ(f.reserve, nullptr);
  EXPECT_EQ(f.unreserve, nullptr);
  EXPECT_EQ(f.permit, nullptr);
  EXPECT_EQ(f.pre_bind, nullptr);
  EXPECT_EQ(f.pre_enqueue, nullptr);
}

TEST(Hooks, ReservePermitWaitAllowAndPreBindThroughTheDescriptor) {
  constexpr schedplug_plugin d = make_descriptor<Slots>("Slots", "1");
  FakeHost host;
  void* inst = create(d, &host.host, R"({"slots": 2})");
  PodAndNode a("uid-a", "a"), b("uid-b", "b");
  Buffer r;
  ASSERT_EQ(d.reserve(inst, &a.pod, &a.node, &r.r), SCHEDPLUG_SUCCESS);
  schedplug_permit_result out{sizeof out, 0, 0};
  EXPECT_EQ(d.permit(inst, &a.pod, &a.node, &out, &r.r), SCHEDPLUG_WAIT);
  EXPECT_EQ(out.timeout_ms, 30000u);
  // The second pod fills the node: it passes and allows the first.
  ASSERT_EQ(d.reserve(inst, &b.pod, &b.node, &r.r), SCHEDPLUG_SUCCESS);
  out = {sizeof out, 0, 0};
  EXPECT_EQ(d.permit(inst, &b.pod, &b.node, &out, &r.r), SCHEDPLUG_SUCCESS);
  EXPECT_EQ(host.decisions, std::vector<std::string>{"allow uid-a"});
  EXPECT_EQ(d.filter(inst, &a.pod, &a.node, &r.r), SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(r.str(), "node(s) had no free slot");

  FakePatch patch;
  EXPECT_EQ(d.pre_bind(inst, &b.pod, &b.node, &patch.patch, &r.r),
            SCHEDPLUG_SUCCESS);
  EXPECT_EQ(patch.labels["slots.example.com/slot"], "1");
  EXPECT_EQ(patch.annotations["slots.example.com/slot"], "1");

  // Unreserve frees the slot, twice and for a pod never reserved too.
  d.unreserve(inst, &a.pod, &a.node);
  d.unreserve(inst, &a.pod, &a.node);
  PodAndNode never("uid-never");
  d.unreserve(inst, &never.pod, &never.node);
  EXPECT_EQ(d.filter(inst, &a.pod, &a.node, &r.r), SCHEDPLUG_SUCCESS);
  FakePatch none;
  EXPECT_EQ(d.pre_bind(inst, &a.pod, &a.node, &none.patch, &r.r),
            SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str(), "no slot reserved");
  d.destroy(inst);
}

TEST(Hooks, PreEnqueueGatesWithItsReason) {
  constexpr schedplug_plugin d = make_descriptor<Slots>("Slots", "1");
  void* inst = create(d, nullptr);
  PodAndNode p("uid-p");
  Buffer r;
  EXPECT_EQ(d.pre_enqueue(inst, &p.pod, &r.r), SCHEDPLUG_SUCCESS);
  std::array<schedplug_kv, 1> hold{
      {{schedplug_str_of("slots.example.com/hold"), schedplug_str_of("")}}};
  p.pod.annotations = {hold.data(), hold.size()};
  EXPECT_EQ(d.pre_enqueue(inst, &p.pod, &r.r),
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_EQ(r.str(), "pod is held");
  d.destroy(inst);
}

TEST(Hooks, PatchRefusalsBecomeAnErrorNamingTheKey) {
  constexpr schedplug_plugin d = make_descriptor<Slots>("Slots", "1");
  void* inst = create(d, nullptr);
  PodAndNode p("uid-p");
  Buffer r;
  ASSERT_EQ(d.reserve(inst, &p.pod, &p.node, &r.r), SCHEDPLUG_SUCCESS);
  FakePatch full;
  full.room = 1;  // the label fits, the annotation does not
  EXPECT_EQ(d.pre_bind(inst, &p.pod, &p.node, &full.patch, &r.r),
            SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str().rfind("the host refused the pod annotation "
                          "\"slots.example.com/slot\" (",
                          0),
            0u)
      << r.str();
  full.labels.clear();
  full.room = 0;
  EXPECT_EQ(d.pre_bind(inst, &p.pod, &p.node, &full.patch, &r.r),
            SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str().rfind("the host refused the pod label "
                          "\"slots.example.com/slot\"=\"0\" (",
                          0),
            0u)
      << r.str();
  EXPECT_EQ(PodPatch(nullptr).SetLabel("a", "b").code(), SCHEDPLUG_ERROR);
  d.destroy(inst);
}

TEST(Hooks, WaitCarriesItsTimeoutAndOutOfRangeIsAnError) {
  EXPECT_EQ(Status::Wait(250ms).code(), SCHEDPLUG_WAIT);
  EXPECT_EQ(Status::Wait(250ms).timeout(), 250ms);
  EXPECT_EQ(Status::Success().timeout(), 0ms);
  struct Waits {
    explicit Waits(const schedplug::Args& a)
        : ms(a.integer("ms", 1, -10, 1000000)) {}
    Status Permit(const Pod&, const Node&) const {
      return Status::Wait(std::chrono::milliseconds(ms));
    }
    int64_t ms;
  };
  constexpr schedplug_plugin d = make_descriptor<Waits>("Waits", "1");
  PodAndNode p("uid-p");
  for (const auto& [ms, code] : std::vector<std::pair<int64_t, schedplug_code>>{
           {1, SCHEDPLUG_WAIT},
           {900000, SCHEDPLUG_WAIT},
           {900001, SCHEDPLUG_ERROR},
           {0, SCHEDPLUG_ERROR},
           {-5, SCHEDPLUG_ERROR}}) {
    const std::string args = "{\"ms\": " + std::to_string(ms) + "}";
    void* inst = create(d, nullptr, args.c_str());
    schedplug_permit_result out{sizeof out, 0, 0};
    Buffer r;
    EXPECT_EQ(d.permit(inst, &p.pod, &p.node, &out, &r.r), code) << ms;
    if (code == SCHEDPLUG_WAIT) {
      EXPECT_EQ(out.timeout_ms, static_cast<uint64_t>(ms));
    } else {
      EXPECT_EQ(out.timeout_ms, 0u);
      EXPECT_EQ(r.str(), "Permit returned Status::Wait(" + std::to_string(ms) +
                             "ms); the timeout must be from 1 ms to 900000 "
                             "ms (15 minutes, kube-scheduler's limit)");
    }
    d.destroy(inst);
  }
}

struct Throws {
  Status Reserve(const Pod&, const Node&) {
    throw std::runtime_error("reserve broke");
  }
  void Unreserve(const Pod&, const Node&) {
    throw std::runtime_error("unreserve broke");
  }
  Status Permit(const Pod&, const Node&) { throw 42; }
  Status PreBind(const Pod&, const Node&, PodPatch&) {
    throw std::logic_error("pre_bind broke");
  }
  Status PreEnqueue(const Pod&) { throw std::runtime_error("gate broke"); }
};

TEST(Hooks, ExceptionsBecomeErrorsAndUnreserveLogsThem) {
  constexpr schedplug_plugin d = make_descriptor<Throws>("Throws", "1");
  FakeHost host;
  void* inst = create(d, &host.host);
  PodAndNode p("uid-p");
  Buffer r;
  EXPECT_EQ(d.reserve(inst, &p.pod, &p.node, &r.r), SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str(), "exception in Reserve: reserve broke");
  schedplug_permit_result out{sizeof out, 0, 0};
  EXPECT_EQ(d.permit(inst, &p.pod, &p.node, &out, &r.r), SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str(), "unknown exception in Permit");
  FakePatch patch;
  EXPECT_EQ(d.pre_bind(inst, &p.pod, &p.node, &patch.patch, &r.r),
            SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str(), "exception in PreBind: pre_bind broke");
  EXPECT_EQ(d.pre_enqueue(inst, &p.pod, &r.r), SCHEDPLUG_ERROR);
  EXPECT_EQ(r.str(), "exception in PreEnqueue: gate broke");
  d.unreserve(inst, &p.pod, &p.node);
  ASSERT_EQ(host.logs.size(), 1u);
  EXPECT_EQ(host.logs[0],
            "exception in Unreserve of pod ns/web-1 on node node-1 (ignored: "
            "Unreserve cannot fail; release what Reserve took without "
            "throwing): unreserve broke");
  d.destroy(inst);
}

TEST(Hooks, PermitServicesPassTheHostsAnswerAndAnOlderHostIsAnError) {
  FakeHost host;
  const Host h(&host.host);
  EXPECT_EQ(h.PermitAllow("u1"), SCHEDPLUG_SUCCESS);
  host.answer = SCHEDPLUG_SKIP;
  EXPECT_EQ(h.PermitReject("u2", "group does not fit"), SCHEDPLUG_SKIP);
  EXPECT_EQ(host.decisions, (std::vector<std::string>{
                                "allow u1", "reject u2: group does not fit"}));
  // A v1.5 host's struct ends before the permit functions.
  FakeHost old(offsetof(schedplug_host, permit_allow));
  const Host o(&old.host);
  EXPECT_EQ(o.PermitAllow("u1"), SCHEDPLUG_ERROR);
  EXPECT_EQ(o.PermitReject("u1", "no"), SCHEDPLUG_ERROR);
  EXPECT_TRUE(old.decisions.empty());
  EXPECT_EQ(Host().PermitAllow("u1"), SCHEDPLUG_ERROR);
}

}  // namespace
