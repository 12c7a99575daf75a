// The test kit's calls of the hooks of plugins that own a resource (ABI
// v1.6) on SlotOwner (slot_owner.cpp) and its careless build, and the
// host's pod patch rules the kit applies.
#include <gtest/gtest.h>

#include <schedplug/resource_hooks.hpp>
#include <schedplug/testing.hpp>
#include <string>

namespace {

namespace st = schedplug::testing;
using schedplug::runtime::pod_annotation_problem;
using schedplug::runtime::pod_label_problem;

st::Pod wanting(const std::string& name, const char* slots) {
  return st::Pod(name)
      .uid("uid-" + name)
      .annotation("slots.example.com/want", slots);
}
st::Node node(const char* slots) {
  return st::Node("n1").label("slots.example.com/count", slots);
}

TEST(KitHooks, ReserveFilterUnreserveAndPreBindTheAssignment) {
  auto plugin = st::Plugin::load(SDK_TEST_SLOT_OWNER_SO);
  ASSERT_TRUE(plugin->has_reserve() && plugin->has_unreserve() &&
              plugin->has_permit() && plugin->has_pre_bind() &&
              plugin->has_pre_enqueue());
  const st::Pod a = wanting("a", "2"), b = wanting("b", "2");
  const st::Node n = node("3");
  ASSERT_TRUE(plugin->reserve(a, n).ok());
  // One slot left: b does not fit any more.
  EXPECT_EQ(plugin->filter(b, n).code, SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(plugin->reserve(b, n).code, SCHEDPLUG_UNSCHEDULABLE);
  const st::PreBindResult bound = plugin->pre_bind(a, n);
  EXPECT_EQ(bound.code, SCHEDPLUG_SUCCESS) << bound.reason;
  EXPECT_EQ(bound.labels, (std::map<std::string, std::string>{
                              {"slots.example.com/assigned", "0-1"}}));
  EXPECT_EQ(bound.annotations, (std::map<std::string, std::string>{
                                   {"slots.example.com/assigned", "0,1"}}));
  plugin->unreserve(a, n);
  EXPECT_EQ(plugin->filter(b, n).code, SCHEDPLUG_SUCCESS);
  EXPECT_EQ(plugin->pre_bind(a, n).reason, "no slots reserved for the pod");
  // A pod without the annotation is skipped, which the host reads as
  // success.
  EXPECT_EQ(plugin->reserve(st::Pod("plain"), n).code, SCHEDPLUG_SUCCESS);
  EXPECT_EQ(plugin->unreserve_problem(b, n), "");
}

TEST(KitHooks, PermitWaitsAndTheDecisionsAreKeptAsTheHostAnswers) {
  auto plugin = st::Plugin::load(SDK_TEST_SLOT_OWNER_SO);
  const st::Pod a = wanting("a", "1").annotation("slots.example.com/gang", "2");
  const st::Pod b = wanting("b", "1").annotation("slots.example.com/gang", "2");
  const st::PermitResult waits = plugin->permit(a, node("2"));
  EXPECT_EQ(waits.code, SCHEDPLUG_WAIT);
  EXPECT_EQ(waits.timeout_ms, 30000u);
  EXPECT_EQ(plugin->permit(b, node("2")).code, SCHEDPLUG_SUCCESS);
  const auto decisions = plugin->permit_decisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].uid, "uid-a");
  EXPECT_TRUE(decisions[0].allow);
  EXPECT_EQ(decisions[0].answer, SCHEDPLUG_SUCCESS);
  // a no longer waits: deciding on it again is SKIP, as on the host.
  EXPECT_EQ(plugin->permit(a, node("2")).code, SCHEDPLUG_WAIT);
  plugin->unreserve(a, node("2"));
  EXPECT_EQ(plugin->permit(b, node("2")).code, SCHEDPLUG_SUCCESS);
  EXPECT_EQ(plugin->permit_decisions().back().answer, SCHEDPLUG_SKIP);
}

TEST(KitHooks, PreEnqueueGates) {
  auto plugin = st::Plugin::load(SDK_TEST_SLOT_OWNER_SO);
  EXPECT_TRUE(plugin->pre_enqueue(wanting("a", "1")).ok());
  const auto held = plugin->pre_enqueue(
      wanting("a", "1").annotation("slots.example.com/hold", "yes"));
  EXPECT_EQ(held.code, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_EQ(held.reason, "pod is held (slots.example.com/hold)");
}

TEST(KitHooks, TheCarelessBuildsMistakesAreReported) {
  auto plugin = st::Plugin::load(SDK_TEST_SLOT_OWNER_CARELESS_SO);
  const st::Node n = node("2");
  ASSERT_TRUE(plugin->reserve(wanting("other", "2"), n).ok());
  EXPECT_EQ(
      plugin->unreserve_problem(wanting("b", "1"), n),
      "plugin SlotOwner's unreserve() is not tolerant: pod \"b\" on node "
      "\"n1\" got filter Unschedulable (\"node(s) had too few free slots\") "
      "before, and filter Success after unreserve() ran twice for the pod, "
      "which it never reserved; ignore pods you hold nothing for "
      "(kube-scheduler calls unreserve() for every Reserve plugin, a "
      "restarted host for pods it never reserved)");

  ASSERT_TRUE(plugin->reserve(wanting("a", "2"), n).ok());
  const st::PreBindResult bound = plugin->pre_bind(wanting("a", "2"), n);
  EXPECT_EQ(bound.code, SCHEDPLUG_ERROR);
  // The host's sentence, then what the plugin said about the refusal.
  EXPECT_EQ(bound.reason.rfind(
                "plugin SlotOwner's pre_bind(): the label "
                "\"slots.example.com/assigned\" was refused: its value \"0,1\" "
                "is not valid (a label value is empty or 1 to 63 characters: "
                "letters, digits, '-', '_' and '.', beginning and ending with "
                "a letter or digit) (the plugin says: the host refused the pod "
                "label \"slots.example.com/assigned\"=\"0,1\" (",
                0),
            0u)
      << bound.reason;
  EXPECT_TRUE(bound.labels.empty());

  const st::PermitResult waits = plugin->permit(
      wanting("a", "1").annotation("slots.example.com/gang", "2"), n);
  EXPECT_EQ(waits.code, SCHEDPLUG_ERROR);
  // The C++ layer refuses the wait before the host sees it.
  EXPECT_EQ(waits.reason,
            "Permit returned Status::Wait(1200000ms); the timeout must be "
            "from 1 ms to 900000 ms (15 minutes, kube-scheduler's limit)");
}

// The host's reading of a C plugin's timeout_ms, which the kit applies.
TEST(PermitRules, ZeroIsTheMostAndLongerIsAProblem) {
  std::string problem;
  EXPECT_EQ(schedplug::runtime::permit_wait_ms("P", 0, problem), 900000u);
  EXPECT_EQ(schedplug::runtime::permit_wait_ms("P", 900000, problem), 900000u);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(schedplug::runtime::permit_wait_ms("P", 900001, problem), 0u);
  EXPECT_EQ(problem,
            "plugin P's permit() made the pod wait 900001 ms, longer than the "
            "900000 ms (15 minutes) kube-scheduler allows; set timeout_ms to "
            "at most SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS (0 means that much)");
}

TEST(PodPatchRules, LabelsAsKubernetesValidatesThem) {
  EXPECT_EQ(pod_label_problem("app", ""), "");
  EXPECT_EQ(pod_label_problem("example.com/a_b.c-d", "A-1_b.2"), "");
  EXPECT_EQ(pod_label_problem("x", std::string(63, 'v')), "");
  EXPECT_NE(pod_label_problem("x", std::string(64, 'v')), "");
  EXPECT_NE(pod_label_problem("x", "-a"), "");
  EXPECT_NE(pod_label_problem("x", "a b"), "");
  EXPECT_NE(pod_label_problem("", "a"), "");
  EXPECT_NE(pod_label_problem("Example.com/a", "a"), "");
  EXPECT_NE(pod_label_problem(std::string(64, 'p') + ".com/a", "a"), "");
  EXPECT_NE(pod_label_problem("a/b/c", "a"), "");
  EXPECT_NE(pod_label_problem("example..com/a", "a"), "");
  EXPECT_NE(pod_label_problem("example.com/", "a"), "");
  EXPECT_NE(pod_label_problem(std::string(254, 'a') + "/b", "a"), "");
  EXPECT_NE(pod_label_problem(std::string(64, 'k'), "a"), "");
  EXPECT_EQ(pod_label_problem("a/b/c", "v"),
            "the label key \"a/b/c\" was refused: its name \"b/c\" is not a "
            "qualified name (1 to 63 characters: letters, digits, '-', '_' "
            "and '.', beginning and ending with a letter or digit)");
}

TEST(PodPatchRules, AnnotationsKeysQualifiedValuesBounded) {
  EXPECT_EQ(pod_annotation_problem("example.com/Key", "any, text: \n"), "");
  EXPECT_NE(pod_annotation_problem("Example.COM/Key", "v"), "");
  EXPECT_EQ(pod_annotation_problem(
                "k", std::string(SCHEDPLUG_POD_PATCH_VALUE_MAX, 'v')),
            "");
  EXPECT_EQ(pod_annotation_problem(
                "k", std::string(SCHEDPLUG_POD_PATCH_VALUE_MAX + 1, 'v')),
            "the annotation \"k\" was refused: its value is 4097 bytes, more "
            "than SCHEDPLUG_POD_PATCH_VALUE_MAX (4096)");
  EXPECT_NE(pod_annotation_problem("k", "\xff"), "");
  EXPECT_NE(pod_annotation_problem("bad key", "v"), "");
}

TEST(ResourceHookRules, CodesAsTheHostReadsThem) {
  using schedplug::runtime::resource_hook_verdict;
  EXPECT_EQ(
      resource_hook_verdict("P", "reserve", SCHEDPLUG_SKIP, "x", false).code,
      SCHEDPLUG_SUCCESS);
  EXPECT_EQ(
      resource_hook_verdict("P", "permit", SCHEDPLUG_WAIT, "x", true).code,
      SCHEDPLUG_WAIT);
  EXPECT_EQ(
      resource_hook_verdict("P", "reserve", SCHEDPLUG_WAIT, "", false).reason,
      "plugin P returned the code WAIT, which only permit() may return, from "
      "reserve()");
  EXPECT_EQ(resource_hook_verdict("P", "pre_enqueue", 9, "", false).reason,
            "plugin P returned the unknown status code 9 from pre_enqueue()");
}

TEST(PodPatchRules, TheCollectorRefusesTheSeventeenthEntryAndKeepsTheLast) {
  schedplug::runtime::PodPatchCollector collector;
  schedplug_pod_patch* p = collector.get();
  const auto set = [&](bool label, const std::string& k, const char* v) {
    return (label ? p->set_label : p->set_annotation)(
        p->context, schedplug_str{k.data(), k.size()}, schedplug_str_of(v));
  };
  for (unsigned i = 0; i < SCHEDPLUG_POD_PATCH_MAX; ++i) {
    ASSERT_EQ(set(i % 2 == 0, "k" + std::to_string(i), "v"), SCHEDPLUG_SUCCESS);
  }
  // Setting a key again replaces it and takes no room.
  EXPECT_EQ(set(true, "k0", "again"), SCHEDPLUG_SUCCESS);
  EXPECT_EQ(collector.labels().at("k0"), "again");
  EXPECT_EQ(set(false, "k99", "v"), SCHEDPLUG_ERROR);
  EXPECT_EQ(collector.refused(),
            "the annotation \"k99\" was refused: the patch already holds 16 "
            "labels and annotations, the most one pre_bind() may set "
            "(SCHEDPLUG_POD_PATCH_MAX)");
  EXPECT_EQ(set(true, "bad key", "v"), SCHEDPLUG_ERROR);
  EXPECT_EQ(collector.labels().size() + collector.annotations().size(),
            SCHEDPLUG_POD_PATCH_MAX);
  // The first refusal is the one reported.
  EXPECT_NE(collector.refused().find("k99"), std::string::npos);
}

}  // namespace
