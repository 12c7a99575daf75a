// DeviceShare, loaded from its built .so: Filter and Score with the SDK's
// test kit (the host's rules), and Reserve, Unreserve and PreBind through
// the descriptor, on one instance, as the host calls them.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <stdexcept>
#include <string>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

constexpr const char* kCount = "devices.schedplug.dev/count";
constexpr const char* kRequest = "devices.schedplug.dev/request";
constexpr const char* kAssigned = "devices.schedplug.dev/assigned";
constexpr const char* kTooFew = "node(s) had too few free devices";

Node DeviceNode(std::string name, std::string count) {
  Node n(std::move(name));
  n.label(kCount, std::move(count));
  return n;
}

Pod DevicePod(std::string name, std::string request) {
  Pod p(name);
  p.uid("uid-" + name).annotation(kRequest, std::move(request));
  return p;
}

TEST(DeviceShare, DeclaresItsHooksDataAndEvents) {
  auto plugin = create_plugin(DEVICE_SHARE_SO);
  const schedplug_plugin& d = plugin->descriptor();
  EXPECT_EQ(plugin->name(), "DeviceShare");
  EXPECT_NE(d.filter, nullptr);
  EXPECT_NE(d.score, nullptr);
  EXPECT_NE(d.reserve, nullptr);
  EXPECT_NE(d.unreserve, nullptr);
  EXPECT_NE(d.pre_bind, nullptr);
  EXPECT_EQ(d.permit, nullptr);
  EXPECT_EQ(d.pre_enqueue, nullptr);
  EXPECT_EQ(plugin->settings().data, SCHEDPLUG_DATA_NODE_PODS);
  EXPECT_EQ(d.events, SCHEDPLUG_EVENT_POD_DELETE | SCHEDPLUG_EVENT_NODE_ADD |
                          SCHEDPLUG_EVENT_NODE_UPDATE_LABEL);
  EXPECT_THROW(create_plugin(DEVICE_SHARE_SO, R"({"devices": 4})"), Error);
  EXPECT_THROW(create_plugin(DEVICE_SHARE_SO, R"({"startupSettle": 10})"),
               Error);
}

TEST(DeviceShare, FilterCountsTheNodesPodsLabelsAndScorePacks) {
  auto plugin = create_plugin(DEVICE_SHARE_SO);
  Node roomy = DeviceNode("roomy", "4");
  roomy.pod(NodePod("a").label(kAssigned, "0"));
  Node full = DeviceNode("full", "4");
  full.pod(NodePod("b").label(kAssigned, "0-1"));
  full.pod(NodePod("c").label(kAssigned, "1-2"));  // overlap: counted once
  const Cycle cycle = plugin->run(
      DevicePod("web", "2"),
      {Node("plain"), DeviceNode("typo", "four"), DeviceNode("small", "1"),
       full, roomy, DeviceNode("empty", "4")});
  EXPECT_EQ(
      compare(cycle,
              {{"plain", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
                "node(s) had no devices (label devices.schedplug.dev/count)"},
               {"typo", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
                "node(s) had an invalid devices.schedplug.dev/count label "
                "(want a whole number from 0 to 64)"},
               {"small", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
                "node(s) had fewer devices than the pod requests"},
               {"full", SCHEDPLUG_UNSCHEDULABLE, kTooFew},
               // 1 + 2 devices used after placing, against 0 + 2: packs.
               {"roomy", SCHEDPLUG_SUCCESS, "", 100},
               {"empty", SCHEDPLUG_SUCCESS, "", 0}}),
      "");
}

TEST(DeviceShare, PodsWithoutTheAnnotationAreSkippedAndTyposRejected) {
  auto plugin = create_plugin(DEVICE_SHARE_SO);
  Pod plain("plain");
  EXPECT_FALSE(plugin->begin_pod(plain).runs_filter());
  EXPECT_FALSE(plugin->begin_pod(plain).runs_score());
  for (const char* bad : {"0", "-1", "two", "17", "1.5", ""}) {
    const Cycle cycle =
        plugin->run(DevicePod("typo", bad), {DeviceNode("n1", "4")});
    EXPECT_EQ(compare(cycle, {{"n1", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
                               "pod's annotation devices.schedplug.dev/request "
                               "must be a whole number from 1 to 16"}}),
              "")
        << '"' << bad << '"';
  }
}

// A reason buffer, as the host hands one to a hook.
struct Reason {
  std::array<char, SCHEDPLUG_REASON_MAX> text{};
  schedplug_reason r{text.data(), text.size()};
  std::string str() const { return text.data(); }
};

// The labels and annotations PreBind sets.
struct Patch {
  std::map<std::string, std::string> labels, annotations;
  schedplug_pod_patch patch{sizeof(schedplug_pod_patch), 0, this, &Annotate,
                            &Label};
  static schedplug_code Annotate(void* c, schedplug_str k, schedplug_str v) {
    static_cast<Patch*>(c)->annotations[std::string(k.data, k.len)] =
        std::string(v.data, v.len);
    return SCHEDPLUG_SUCCESS;
  }
  static schedplug_code Label(void* c, schedplug_str k, schedplug_str v) {
    static_cast<Patch*>(c)->labels[std::string(k.data, k.len)] =
        std::string(v.data, v.len);
    return SCHEDPLUG_SUCCESS;
  }
};

// One instance of the built plugin, created as the host creates it, whose
// hooks the test calls through the descriptor (the kit has no Reserve,
// Unreserve or PreBind yet). Filter and Score get no per-pod state, as on
// a host older than ABI v1.1: the C++ layer begins the pod inside them.
class Instance {
 public:
  // A settle time of 1 ns: Reserve works at once.
  explicit Instance(const std::string& args = R"({"startupSettle": "1ns"})") {
    handle_ = dlopen(DEVICE_SHARE_SO, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error(dlerror());
    const auto entry = reinterpret_cast<schedplug_plugin_v1_fn>(
        dlsym(handle_, SCHEDPLUG_ENTRY_SYMBOL));
    if (entry == nullptr) throw std::runtime_error("no entry symbol");
    d_ = entry();
    settings_.struct_size = sizeof settings_;
    host_.struct_size = sizeof host_;
    host_.settings = &settings_;
    Reason error;
    if (d_->create(args.c_str(), args.size(), &host_, &instance_, &error.r) !=
        SCHEDPLUG_SUCCESS) {
      throw std::runtime_error(error.str());
    }
  }
  ~Instance() {
    d_->destroy(instance_);
    dlclose(handle_);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  std::pair<schedplug_code, std::string> Filter(const Pod& pod,
                                                const Node& node) {
    Reason reason;
    const schedplug_code code =
        d_->filter(instance_, &pod.view(), &node.view(), &reason.r);
    return {code, reason.str()};
  }
  std::pair<schedplug_code, std::string> Reserve(const Pod& pod,
                                                 const Node& node) {
    Reason reason;
    const schedplug_code code =
        d_->reserve(instance_, &pod.view(), &node.view(), &reason.r);
    return {code, reason.str()};
  }
  void Unreserve(const Pod& pod, const Node& node) {
    d_->unreserve(instance_, &pod.view(), &node.view());
  }
  std::pair<schedplug_code, std::string> PreBind(const Pod& pod,
                                                 const Node& node,
                                                 Patch& patch) {
    Reason reason;
    const schedplug_code code = d_->pre_bind(
        instance_, &pod.view(), &node.view(), &patch.patch, &reason.r);
    return {code, reason.str()};
  }

 private:
  void* handle_ = nullptr;
  const schedplug_plugin* d_ = nullptr;
  void* instance_ = nullptr;
  schedplug_settings settings_{};
  schedplug_host host_{};
};

using Answer = std::pair<schedplug_code, std::string>;
const Answer kOk{SCHEDPLUG_SUCCESS, ""};

TEST(DeviceShareHooks, ReservePicksTheLowestFreeAndPreBindWritesThem) {
  Instance plugin;
  Node node = DeviceNode("n1", "4");
  node.pod(NodePod("bound").label(kAssigned, "1"));
  const Pod web = DevicePod("web", "2");
  ASSERT_EQ(plugin.Reserve(web, node), kOk);
  Patch patch;
  ASSERT_EQ(plugin.PreBind(web, node, patch), kOk);
  EXPECT_EQ(patch.labels,
            (std::map<std::string, std::string>{{kAssigned, "0-2"}}));
  EXPECT_EQ(patch.annotations,
            (std::map<std::string, std::string>{{kAssigned, "0,2"}}));
}

TEST(DeviceShareHooks, FilterSeesReservationsInFlightUntilUnreserve) {
  Instance plugin;
  const Node node = DeviceNode("n1", "4");
  const Pod first = DevicePod("first", "3");
  const Pod second = DevicePod("second", "2");
  ASSERT_EQ(plugin.Filter(second, node), kOk);
  ASSERT_EQ(plugin.Reserve(first, node), kOk);
  // Not bound yet, not on the node: the reservation alone holds 3 of 4.
  EXPECT_EQ(plugin.Filter(second, node),
            Answer(SCHEDPLUG_UNSCHEDULABLE, kTooFew));
  // A Reserve that lost the race to the first pod.
  EXPECT_EQ(plugin.Reserve(second, node),
            Answer(SCHEDPLUG_UNSCHEDULABLE, kTooFew));
  plugin.Unreserve(first, node);
  plugin.Unreserve(first, node);  // tolerant: twice
  EXPECT_EQ(plugin.Filter(second, node), kOk);
  // Unreserved: nothing to write; the binding fails and the pod is retried.
  Patch patch;
  const Answer none = plugin.PreBind(first, node, patch);
  EXPECT_EQ(none.first, SCHEDPLUG_ERROR);
  EXPECT_NE(none.second.find("DeviceShare holds no devices for pod "
                             "default/first on n1"),
            std::string::npos)
      << none.second;
  EXPECT_TRUE(patch.labels.empty() && patch.annotations.empty());
}

TEST(DeviceShareHooks, ReserveWaitsForTheStartupSettleTime) {
  // The default, 10 s: a new instance cannot know the pods an earlier one
  // handed devices to whose binding has not reached the node view yet.
  Instance plugin("{}");
  const Node node = DeviceNode("n1", "4");
  const Pod web = DevicePod("web", "1");
  EXPECT_EQ(plugin.Filter(web, node), kOk);
  const Answer early = plugin.Reserve(web, node);
  EXPECT_EQ(early.first, SCHEDPLUG_ERROR);
  EXPECT_NE(early.second.find("DeviceShare hands out no devices in its first "
                              "seconds (arg startupSettle)"),
            std::string::npos)
      << early.second;
  // Nothing was reserved: PreBind has nothing to write.
  Patch patch;
  EXPECT_EQ(plugin.PreBind(web, node, patch).first, SCHEDPLUG_ERROR);
}

TEST(DeviceShareHooks, PodsWithoutTheAnnotationTakeAndWriteNothing) {
  Instance plugin;
  const Node node = DeviceNode("n1", "4");
  Pod plain("plain");
  plain.uid("uid-plain");
  EXPECT_EQ(plugin.Reserve(plain, node), kOk);
  Patch patch;
  EXPECT_EQ(plugin.PreBind(plain, node, patch), kOk);
  EXPECT_TRUE(patch.labels.empty() && patch.annotations.empty());
  plugin.Unreserve(plain, node);
  // It took nothing: a pod asking for every device still fits.
  EXPECT_EQ(plugin.Reserve(DevicePod("all", "4"), node), kOk);
}

TEST(DeviceShareHooks, ARestartedInstanceRebuildsFromThePodsLabels) {
  Node node = DeviceNode("n1", "4");
  const Pod a = DevicePod("a", "2");
  {
    Instance before;
    ASSERT_EQ(before.Reserve(a, node), kOk);
    Patch patch;
    ASSERT_EQ(before.PreBind(a, node, patch), kOk);
    node.pod(NodePod("a").label(kAssigned, patch.labels[kAssigned]));
  }
  Instance after;
  const Pod b = DevicePod("b", "3");
  EXPECT_EQ(after.Filter(b, node), Answer(SCHEDPLUG_UNSCHEDULABLE, kTooFew));
  const Pod c = DevicePod("c", "2");
  ASSERT_EQ(after.Reserve(c, node), kOk);
  Patch patch;
  ASSERT_EQ(after.PreBind(c, node, patch), kOk);
  EXPECT_EQ(patch.labels[kAssigned], "2-3");
}

}  // namespace
}  // namespace schedplug::testing
