// The test kit holds a plugin to its hints: a plugin that promises
// SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS must answer the same on a node
// with and without its pods, one that promises
// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY the same for a copy of the pod
// under another name and uid, and one that promises
// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS the same for a copy without
// its undeclared labels and annotations and with an undeclared one of each,
// or its tests fail, naming the broken promise; one that promises
// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY likewise for its scores and
// their normalization. A broken promise is reported once per cycle.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

// Every hint about filter, which the sample filters (no Score) declare.
constexpr uint64_t kFilterHints = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                                  SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
                                  SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;

TEST(KitHints, ABrokenPromiseFailsTheCycleNamingIt) {
  auto plugin = create_plugin(FALSE_PROMISE_SO);
  EXPECT_EQ(plugin->settings().hints, SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS);
  Pod pod("web");
  Node idle("idle");
  Node busy("busy");
  busy.pod_count(3);
  // No pods: the same verdict either way, so the promise holds there.
  EXPECT_EQ(plugin->filter(pod, idle).code, SCHEDPLUG_SUCCESS);
  const Verdict v = plugin->filter(pod, busy);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_NE(v.reason.find("FalsePromise promised "
                          "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS (kHints), "
                          "but its filter on node \"busy\" answered "
                          "Unschedulable (\"node(s) already run pods\") with "
                          "the node's pods and Success without them; drop the "
                          "hint"),
            std::string::npos)
      << v.reason;
  EXPECT_EQ(plugin->run(pod, {idle, busy}).error, v.reason);
}

TEST(KitHints, AKeptPromisePassesOnNodesWithPods) {
  // HwEncrypt promises it and reads only a label.
  auto plugin = create_plugin(HW_ENCRYPT_SO);
  EXPECT_EQ(plugin->settings().hints, kFilterHints);
  Pod pod("web");
  pod.annotation("myorg.io/require-hw-encrypt", "true");
  Node busy("busy");
  busy.pod_count(3).requested("cpu", 500);
  const Verdict v = plugin->filter(pod, busy);
  EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE) << v.reason;
}

// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY: FalseIdentity's filter rejects
// pods whose name starts with "x"; the copy the kit makes is named
// "twin-of-<name>", so the promise holds for "web" and breaks for "xenon".
constexpr const char* kIdentityAdvice =
    "; drop the hint, or read neither the pod's name nor its uid in "
    "applies, pod_begin and filter";

TEST(KitHints, ABrokenIdentityPromiseInFilterFailsTheCycleNamingIt) {
  auto plugin = create_plugin(FALSE_IDENTITY_SO);
  EXPECT_EQ(plugin->settings().hints,
            SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY);
  Node node("n1");
  EXPECT_EQ(plugin->filter(Pod("web"), node).code, SCHEDPLUG_SUCCESS);
  EXPECT_TRUE(plugin->run(Pod("web"), {node}).error.empty());
  Pod xenon("xenon");
  xenon.uid("3f1c-uid");
  const Verdict v = plugin->filter(xenon, node);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_EQ(v.reason,
            std::string("FalseIdentity promised "
                        "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY (kHints), "
                        "but on node \"n1\" pod \"xenon\" (uid \"3f1c-uid\") "
                        "got applies true, then filter Unschedulable (\"pod "
                        "names starting with x are not welcome\") and a copy "
                        "named \"twin-of-xenon\" (uid \"twin-of-3f1c-uid\") "
                        "got applies true, then filter Success") +
                kIdentityAdvice);
  const Cycle cycle = plugin->run(xenon, {node});
  EXPECT_EQ(cycle.error, v.reason);
  ASSERT_EQ(cycle.nodes.size(), 1u);
  EXPECT_EQ(cycle.nodes[0].filter.code, SCHEDPLUG_ERROR);
}

// The gates are part of the promise: a pod whose filter applies() skips is
// checked too, although its filter never runs.
TEST(KitHints, ABrokenIdentityPromiseInAppliesFailsTheCycleNamingIt) {
  auto plugin =
      create_plugin(FALSE_IDENTITY_SO, R"({"readNameIn": "applies"})");
  Node node("n1");
  EXPECT_TRUE(plugin->run(Pod("web"), {node}).error.empty());
  const Cycle cycle = plugin->run(Pod("xenon"), {node});
  EXPECT_EQ(cycle.error,
            std::string("FalseIdentity promised "
                        "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY (kHints), "
                        "but on node \"n1\" pod \"xenon\" (uid \"uid-1\") "
                        "got applies false and a copy named \"twin-of-xenon\" "
                        "(uid \"twin-of-uid-1\") got applies true, then "
                        "filter Success") +
                kIdentityAdvice);
  EXPECT_EQ(plugin->filter(Pod("xenon"), node).reason, cycle.error);
}

// The sample filters keep the promise on pods of any name, with and without
// their annotations (HwEncrypt's BeginPod closes the filter gate without
// one).
TEST(KitHints, TheSampleFiltersKeepTheIdentityPromise) {
  auto hw = create_plugin(HW_ENCRYPT_SO);
  auto dedicated = create_plugin(DEDICATED_NODES_SO);
  EXPECT_EQ(dedicated->settings().hints, kFilterHints);
  Node plain("plain");
  Node special("special");
  special.label("node.kubernetes.io/hw-encrypt", "true")
      .label("schedplug.io/dedicated", "true");
  for (const char* name : {"web-5d8f7-abcde", "xenon", "twin-of-x"}) {
    for (const char* value : {"", "true", "maybe"}) {
      Pod pod(name);
      pod.uid(std::string("uid-of-") + name);
      if (value[0] != '\0') {
        pod.annotation("myorg.io/require-hw-encrypt", value)
            .annotation("schedplug.io/dedicated-ok", value);
      }
      EXPECT_EQ(hw->run(pod, {plain, special}).error, "") << name << value;
      EXPECT_EQ(dedicated->run(pod, {plain, special}).error, "")
          << name << value;
    }
  }
}

// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS: FalseKeys declares the
// annotation "team.io/tier" and reads it (tier "none" is rejected), but its
// filter also rejects pods labelled app=batch, a label it did not declare.
// The kit's copy keeps only the declared labels and annotations and gains
// "schedplug-kit.test/undeclared": "x".
constexpr const char* kKeysAdvice =
    "; declare every pod label and annotation key the plugin reads in "
    "applies, pod_begin and filter (declared label keys: none; annotation "
    "keys: \"team.io/tier\"), or drop the hint";

TEST(KitHints, ABrokenKeysPromiseInFilterFailsTheCycleNamingIt) {
  auto plugin = create_plugin(FALSE_KEYS_SO);
  EXPECT_EQ(plugin->settings().hints, kFilterHints);
  EXPECT_TRUE(plugin->pod_keys().labels().empty());
  EXPECT_EQ(plugin->pod_keys().annotations(),
            std::vector<std::string>{"team.io/tier"});
  Node node("n1");
  // Undeclared labels and annotations it does not read: the promise holds.
  Pod web("web");
  web.label("app", "web").annotation("deploy.io/rev", "3");
  EXPECT_EQ(plugin->filter(web, node).code, SCHEDPLUG_SUCCESS);
  // The declared annotation stays on the copy: the same verdict either way.
  Pod waiting("waiting");
  waiting.label("app", "web").annotation("team.io/tier", "none");
  EXPECT_EQ(plugin->filter(waiting, node).code, SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_TRUE(plugin->run(waiting, {node}).error.empty());
  Pod batch("batch-1");
  batch.label("app", "batch")
      .label("pod-template-hash", "5d8f7")
      .annotation("deploy.io/rev", "3")
      .annotation("team.io/tier", "gold");
  const Verdict v = plugin->filter(batch, node);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_EQ(v.reason,
            std::string("FalseKeys promised "
                        "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS "
                        "(kHints), but on node \"n1\" pod \"batch-1\" got "
                        "applies true, then filter Unschedulable (\"batch "
                        "pods are not welcome\") and a copy without its "
                        "undeclared labels (\"app\", \"pod-template-hash\") "
                        "and annotations (\"deploy.io/rev\") and with the "
                        "undeclared label and annotation "
                        "\"schedplug-kit.test/undeclared\": \"x\" got "
                        "applies true, then filter Success") +
                kKeysAdvice);
  const Cycle cycle = plugin->run(batch, {node});
  EXPECT_EQ(cycle.error, v.reason);
  ASSERT_EQ(cycle.nodes.size(), 1u);
  EXPECT_EQ(cycle.nodes[0].filter.code, SCHEDPLUG_ERROR);
}

// The gates are part of the promise: applies() reading an undeclared
// annotation is caught although the filter never runs.
TEST(KitHints, ABrokenKeysPromiseInAppliesFailsTheCycleNamingIt) {
  auto plugin = create_plugin(FALSE_KEYS_SO, R"({"undeclared": "annotation"})");
  Node node("n1");
  EXPECT_TRUE(plugin->run(Pod("web"), {node}).error.empty());
  Pod skipped("skipped");
  skipped.annotation("skip.io/me", "yes");
  const Cycle cycle = plugin->run(skipped, {node});
  EXPECT_EQ(cycle.error,
            std::string("FalseKeys promised "
                        "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS "
                        "(kHints), but on node \"n1\" pod \"skipped\" got "
                        "applies false and a copy without its undeclared "
                        "labels (none) and annotations (\"skip.io/me\") and "
                        "with the undeclared label and annotation "
                        "\"schedplug-kit.test/undeclared\": \"x\" got "
                        "applies true, then filter Success") +
                kKeysAdvice);
  EXPECT_EQ(plugin->filter(skipped, node).reason, cycle.error);
}

// The sample filters declare the one pod annotation they read (their
// podAnnotation arg) and no label, and keep the promise on pods with any
// other labels and annotations.
TEST(KitHints, TheSampleFiltersKeepTheDeclaredKeysPromise) {
  auto hw = create_plugin(HW_ENCRYPT_SO);
  auto dedicated = create_plugin(DEDICATED_NODES_SO);
  EXPECT_TRUE(hw->pod_keys().labels().empty());
  EXPECT_EQ(hw->pod_keys().annotations(),
            std::vector<std::string>{"myorg.io/require-hw-encrypt"});
  EXPECT_TRUE(dedicated->pod_keys().labels().empty());
  EXPECT_EQ(dedicated->pod_keys().annotations(),
            std::vector<std::string>{"schedplug.io/dedicated-ok"});
  // The key follows the arg.
  EXPECT_EQ(create_plugin(HW_ENCRYPT_SO, R"({"podAnnotation": "a.io/enc"})")
                ->pod_keys()
                .annotations(),
            std::vector<std::string>{"a.io/enc"});
  EXPECT_EQ(create_plugin(DEDICATED_NODES_SO, R"({"podAnnotation": "a.io/ok"})")
                ->pod_keys()
                .annotations(),
            std::vector<std::string>{"a.io/ok"});
  Node plain("plain");
  Node special("special");
  special.label("node.kubernetes.io/hw-encrypt", "true")
      .label("schedplug.io/dedicated", "true");
  for (const char* value : {"", "true", "false", "maybe"}) {
    Pod pod("web-5d8f7-abcde");
    pod.label("app", "web")
        .label("pod-template-hash", "5d8f7")
        .annotation("deploy.io/revision", "3")
        .annotation("schedplug.io/dedicated", "true");
    if (value[0] != '\0') {
      pod.annotation("myorg.io/require-hw-encrypt", value)
          .annotation("schedplug.io/dedicated-ok", value);
    }
    EXPECT_EQ(hw->run(pod, {plain, special}).error, "") << value;
    EXPECT_EQ(dedicated->run(pod, {plain, special}).error, "") << value;
    EXPECT_NE(hw->filter(pod, special).code, SCHEDPLUG_ERROR) << value;
    EXPECT_NE(dedicated->filter(pod, special).code, SCHEDPLUG_ERROR) << value;
  }
}

// How often `part` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size())) {
    ++n;
  }
  return n;
}

// A broken promise fails the cycle on the first node that shows it; the
// other nodes keep the plugin's own verdicts, and compare() prints the
// sentence once.
TEST(KitHints, ABrokenPromiseIsReportedOncePerCycle) {
  auto plugin = create_plugin(FALSE_IDENTITY_SO);
  const Cycle cycle =
      plugin->run(Pod("xenon"), {Node("a"), Node("b"), Node("c")});
  ASSERT_EQ(cycle.nodes.size(), 3u);
  EXPECT_EQ(cycle.nodes[0].filter.code, SCHEDPLUG_ERROR);
  EXPECT_EQ(cycle.nodes[0].filter.reason, cycle.error);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(cycle.nodes[i].filter.code, SCHEDPLUG_UNSCHEDULABLE);
    EXPECT_EQ(cycle.nodes[i].filter.reason,
              "pod names starting with x are not welcome");
  }
  const std::string diff = compare(cycle, {"a", "b", "c"});
  EXPECT_EQ(occurrences(diff, "promised "), 1u) << diff;
  EXPECT_NE(diff.find("a: expected filter Success \"\", got Error (the "
                      "cycle's error)\n"),
            std::string::npos)
      << diff;
  EXPECT_NE(diff.find("the cycle:\na  Error (the cycle's error)  score=-\n"),
            std::string::npos)
      << diff;
  EXPECT_EQ(occurrences(cycle.table(), "promised "), 1u) << cycle.table();
}

// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY: FalseScoreIdentity scores 10
// per pod on the node (allowed) and 50 more for pods whose name starts with
// "x" (not allowed), or, with readNameIn "normalize", reverses their
// normalized scores.
constexpr const char* kScoreIdentityAdvice =
    "; drop the hint, or read neither the pod's name nor its uid in "
    "applies, pod_begin, score and normalize_score";

TEST(KitHints, ABrokenScoreIdentityPromiseFailsTheCycleOnce) {
  auto plugin = create_plugin(FALSE_SCORE_IDENTITY_SO);
  EXPECT_EQ(plugin->settings().hints,
            SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY);
  Node idle("idle");
  Node busy("busy");
  busy.pod_count(2);
  Node one("one");
  one.pod_count(1);
  // Scores that follow the node's pods keep the promise (no filter: Skip).
  Pod web("web");
  EXPECT_EQ(plugin->score(web, busy).score, 20);
  EXPECT_EQ(compare(plugin->run(web, {idle, busy, one}),
                    {{"idle", SCHEDPLUG_SKIP, "", 0},
                     {"busy", SCHEDPLUG_SKIP, "", 20},
                     {"one", SCHEDPLUG_SKIP, "", 10}}),
            "");
  Pod xenon("xenon");
  xenon.uid("3f1c-uid");
  const ScoreResult s = plugin->score(xenon, busy);
  EXPECT_EQ(s.code, SCHEDPLUG_ERROR);
  EXPECT_EQ(s.reason,
            std::string("FalseScoreIdentity promised "
                        "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (kHints), "
                        "but pod \"xenon\" (uid \"3f1c-uid\") got score "
                        "\"busy\" 70 and a copy named \"twin-of-xenon\" (uid "
                        "\"twin-of-3f1c-uid\") got score \"busy\" 20") +
                kScoreIdentityAdvice);
  // The cycle checks the whole score pass once, normalization included.
  const Cycle cycle = plugin->run(xenon, {idle, busy, one});
  EXPECT_EQ(cycle.error,
            std::string("FalseScoreIdentity promised "
                        "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (kHints), "
                        "but pod \"xenon\" (uid \"3f1c-uid\") got score "
                        "\"idle\" 50, \"busy\" 70, \"one\" 60, normalized "
                        "\"idle\" 50, \"busy\" 70, \"one\" 60 and a copy named "
                        "\"twin-of-xenon\" (uid \"twin-of-3f1c-uid\") got "
                        "score \"idle\" 0, \"busy\" 20, \"one\" 10, "
                        "normalized \"idle\" 0, \"busy\" 20, \"one\" 10") +
                kScoreIdentityAdvice);
  const std::string diff = compare(cycle, {"idle", "busy", "one"});
  EXPECT_EQ(occurrences(diff, "promised "), 1u) << diff;
}

TEST(KitHints, ABrokenScoreIdentityPromiseInNormalizeFailsTheCycleNamingIt) {
  auto plugin =
      create_plugin(FALSE_SCORE_IDENTITY_SO, R"({"readNameIn": "normalize"})");
  Node idle("idle");
  Node busy("busy");
  busy.pod_count(2);
  // Each score on its own is the same for the copy.
  EXPECT_EQ(plugin->score(Pod("xenon"), busy).score, 20);
  EXPECT_TRUE(plugin->run(Pod("web"), {idle, busy}).error.empty());
  std::vector<schedplug_node_score> scores = {{schedplug_str_of("idle"), 0},
                                              {schedplug_str_of("busy"), 20}};
  const Verdict v = plugin->normalize(Pod("xenon"), scores);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_EQ(v.reason,
            std::string("FalseScoreIdentity promised "
                        "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (kHints), "
                        "but normalizing the raw scores \"idle\" 0, \"busy\" "
                        "20, pod \"xenon\" (uid \"uid-1\") got normalized "
                        "\"idle\" 100, \"busy\" 80 and a copy named "
                        "\"twin-of-xenon\" (uid \"twin-of-uid-1\") got "
                        "normalized \"idle\" 0, \"busy\" 20; drop the hint, or "
                        "read neither the pod's name nor its uid in applies, "
                        "pod_begin and normalize_score"));
  const std::string error = plugin->run(Pod("xenon"), {idle, busy}).error;
  EXPECT_NE(error.find("got score \"idle\" 0, \"busy\" 20, normalized \"idle\" "
                       "100, \"busy\" 80 and a copy named \"twin-of-xenon\" "
                       "(uid \"twin-of-uid-1\") got score \"idle\" 0, \"busy\" "
                       "20, normalized \"idle\" 0, \"busy\" 20"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace schedplug::testing
