// The ABI v1.1 hooks and fields through the real loader and runtime: typed
// args for C plugins, per-instance settings returned by create(), and the
// per-pod state hook (pod_begin / pod_end) with its separate gates.
// One file for the one ABI minor version: the cases share the loading and node
// helpers below, and typed args and settings are both read in create().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {
namespace {

using ::testing::HasSubstr;

std::filesystem::path abi_file(const std::string& stem) {
  return std::filesystem::path(SCHEDPLUG_ABI_DIR) / (stem + ".so");
}

std::unique_ptr<PluginInstance> make(const std::string& stem,
                                     const std::string& args = "{}") {
  return PluginInstance::create(load_plugin_file(abi_file(stem)), args);
}

std::string create_error(const std::string& stem, const std::string& args) {
  try {
    make(stem, args);
  } catch (const CreateError& e) {
    return e.what();
  }
  return "(created without error)";
}

std::unique_ptr<NodeModel> node(const std::string& name, KeyValues labels = {},
                                uint32_t pods = 0) {
  NodeData d;
  d.name = name;
  d.labels = std::move(labels);
  d.pod_count = pods;
  return std::make_unique<NodeModel>(std::move(d));
}

std::unique_ptr<PodModel> pod(const std::string& name, KeyValues labels = {}) {
  PodData d;
  d.namespace_name = "default";
  d.name = name;
  d.labels = std::move(labels);
  return std::make_unique<PodModel>(std::move(d));
}

// --- typed args --------------------------------------------------------------

std::string summary(const PluginInstance& p) {
  return p.filter(pod("p")->view(), node("n")->view()).reason;
}

TEST(TypedArgs, EveryKindReachesACPluginWithoutAJsonParser) {
  auto p = make("typed_args", R"({
      "name": "web", "enabled": true, "count": 3, "ratio": 0.5,
      "period": "1m30s", "zones": ["a", "b"], "limits": {"cpu": 4}})");
  EXPECT_EQ(summary(*p),
            "name=web enabled=1 count=3 ratio=0.50 period_ns=90000000000 "
            "zones=a,b limits.cpu=4");
}

TEST(TypedArgs, AbsentArgsKeepThePluginsDefaults) {
  EXPECT_EQ(summary(*make("typed_args", "{}")),
            "name=default enabled=0 count=-1 ratio=-1.00 period_ns=0 zones= "
            "limits.cpu=-1");
  EXPECT_EQ(summary(*make("typed_args", R"({"zones": [], "limits": {}})")),
            "name=default enabled=0 count=-1 ratio=-1.00 period_ns=0 zones= "
            "limits.cpu=-1");
}

TEST(TypedArgs, ErrorsNameTheArgAndSuggestTheClosestKey) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {R"({"nmae": "x"})",
       "unknown arg \"nmae\"; did you mean \"name\"? known args: name, "
       "enabled, count, ratio, period, zones, limits, events, policy"},
      {R"({"Count": 1})",
       "unknown arg \"Count\"; did you mean \"count\"? arg names are "
       "case-sensitive"},
      {R"({"limits": {"cpus": 1}})",
       "unknown arg \"limits.cpus\"; did you mean \"limits.cpu\"? known "
       "args: limits.cpu"},
      {R"({"name": ""})", "arg \"name\" must be a non-empty string, got \"\""},
      {R"({"enabled": "yes"})",
       "arg \"enabled\" must be true or false, got \"yes\""},
      {R"({"count": 11})",
       "arg \"count\" must be an integer from 0 to 10, got 11"},
      {R"({"ratio": 1.5})",
       "arg \"ratio\" must be a number from 0 to 1, "
       "got 1.5"},
      {R"({"period": "5"})",
       "arg \"period\" must be a duration such as \"5s\", \"250ms\" or "
       "\"1m30s\" (units ns, us, ms, s, m, h), greater than 0, got \"5\""},
      {R"({"period": "-5s"})", "arg \"period\" must be a duration"},
      {R"({"zones": "a"})",
       "arg \"zones\" must be a list of non-empty strings, got \"a\""},
      {R"({"zones": ["a", 2]})",
       "arg \"zones[1]\" must be a non-empty string, got 2"},
      {R"({"limits": 4})",
       "arg \"limits\" must be an object of named values, got 4"},
      {R"({"limits": {"cpu": "x"}})",
       "arg \"limits.cpu\" must be an integer from 0 to 64, got \"x\""},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(create_error("typed_args", c.args),
                HasSubstr("TypedArgs (" + abi_file("typed_args").string() +
                          ") rejected its args: " + c.message))
        << c.args;
  }
}

TEST(TypedArgs, ReadingArgsAfterCreateIsAnError) {
  auto p = make("typed_args", R"({"name": "x"})");
  Verdict v = p->refresh();
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(v.reason, HasSubstr("args can only be read during create()"));
}

// --- per-instance settings ---------------------------------------------------

TEST(Settings, DefaultToTheDescriptor) {
  auto p = make("typed_args");
  EXPECT_EQ(p->settings().refresh_period_ms, 60000u);
  EXPECT_EQ(p->settings().events, SCHEDPLUG_EVENT_NODE_ADD);
  EXPECT_EQ(p->settings().normalize_policy, SCHEDPLUG_NORMALIZE_NONE);
  EXPECT_EQ(p->settings().hints, 0u) << "hints promise nothing by default";
}

TEST(Settings, CreateSetsThemFromArgs) {
  auto p = make("typed_args",
                R"({"period": "2s", "events": 6, "policy": 2, "hints": 1})");
  EXPECT_EQ(p->settings().refresh_period_ms, 2000u);
  EXPECT_EQ(p->settings().events, 6u);
  EXPECT_EQ(p->settings().normalize_policy, SCHEDPLUG_NORMALIZE_REVERSE);
  EXPECT_EQ(p->settings().hints, SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS);
  // The policy is applied: the fewest pods wins.
  std::vector<schedplug_node_score> scores = {{schedplug_str_of("a"), 1},
                                              {schedplug_str_of("b"), 3}};
  ASSERT_TRUE(p->normalize(pod("p")->view(), scores).ok());
  EXPECT_EQ(scores[0].score, 100);
  EXPECT_EQ(scores[1].score, 0);
  // Another instance of the same library keeps its own settings.
  EXPECT_EQ(make("typed_args")->settings().normalize_policy,
            SCHEDPLUG_NORMALIZE_NONE);
}

TEST(Settings, BrokenSettingsAreRefusedNamingThePlugin) {
  EXPECT_THAT(create_error("typed_args", R"({"policy": 7})"),
              HasSubstr("TypedArgs (" + abi_file("typed_args").string() +
                        ") returned broken settings from create(): "
                        "normalize_policy 7 is not one of NONE (0), LINEAR "
                        "(1), REVERSE (2)"));
  EXPECT_THAT(create_error("typed_args", R"({"events": 4096})"),
              HasSubstr("events has bits 0x1000 that are not "
                        "SCHEDPLUG_EVENT_* values"));
  EXPECT_THAT(create_error("typed_args", R"({"hints": 48})"),
              HasSubstr("hints has bits 0x30 that are not SCHEDPLUG_HINT_* "
                        "values"));
  EXPECT_THAT(create_error("typed_args", R"({"hints": 20})"),
              HasSubstr("hints has bits 0x10 that are not SCHEDPLUG_HINT_* "
                        "values"));
  EXPECT_THAT(create_error("typed_args", R"({"period": "100us"})"),
              HasSubstr("refresh_period_ms is 0 but the plugin has a "
                        "refresh() hook"));
}

// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY promises verdicts that do not
// change over time; TypedArgs has a refresh hook, so the host refuses it.
TEST(Settings, PodIdentityHintWithARefreshHookIsRefused) {
  const std::string refusal =
      "TypedArgs (" + abi_file("typed_args").string() +
      ") returned broken settings from create(): hints has "
      "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, which promises verdicts "
      "that do not change over time, but the plugin has a refresh() hook "
      "(every 60000 ms) that can change them; drop the hint, or the refresh "
      "hook (args given: {\"hints\": 2})";
  EXPECT_EQ(create_error("typed_args", R"({"hints": 2})"), refusal);
  EXPECT_THAT(create_error("typed_args", R"({"hints": 3, "period": "2s"})"),
              HasSubstr("but the plugin has a refresh() hook (every 2000 ms) "
                        "that can change them; drop the hint, or the refresh "
                        "hook"));
  // The other hints do not depend on time: a refresh hook is fine there.
  EXPECT_EQ(make("typed_args", R"({"hints": 1})")->settings().hints,
            SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS);
  EXPECT_EQ(make("typed_args", R"({"hints": 5})")->settings().hints,
            SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS);
}

// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY (plugin.h v1.5) promises
// scores that do not change over time either: refused with TypedArgs's
// refresh hook, with or without the filter's identity hint.
TEST(Settings, ScoreIdentityHintWithARefreshHookIsRefused) {
  EXPECT_EQ(create_error("typed_args", R"({"hints": 8})"),
            "TypedArgs (" + abi_file("typed_args").string() +
                ") returned broken settings from create(): hints has "
                "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, which promises "
                "scores that do not change over time, but the plugin has a "
                "refresh() hook (every 60000 ms) that can change them; drop "
                "the hint, or the refresh hook (args given: {\"hints\": 8})");
  EXPECT_THAT(create_error("typed_args", R"({"hints": 15})"),
              HasSubstr("hints has SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, "
                        "which promises verdicts"));
}

// ScoreHints has no refresh hook: the host takes the v1.5 bit, alone or
// with the others; without a score hook the promise is refused.
TEST(Settings, ScoreIdentityHintIsAcceptedOnAPluginThatScores) {
  EXPECT_EQ(make("score_hints_no_score", R"({"hints": 3})")->settings().hints,
            SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY);
  EXPECT_EQ(create_error("score_hints_no_score", R"({"hints": 8})"),
            "ScoreHintsNoScore (" + abi_file("score_hints_no_score").string() +
                ") returned broken settings from create(): hints has "
                "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a promise about "
                "score() and normalize_score(), but the plugin has no score() "
                "hook; drop the hint, or implement score() (args given: "
                "{\"hints\": 8})");
  EXPECT_EQ(make("score_hints", R"({"hints": 8})")->settings().hints,
            SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY);
  auto all = make("score_hints", R"({"hints": 15})");
  EXPECT_EQ(all->settings().hints, SCHEDPLUG_HINT_ALL);
  EXPECT_EQ(all->score(pod("p")->view(), node("n", {}, 4)->view()).score, 4);
  // Without the bit: no promise, as before v1.5.
  EXPECT_EQ(make("score_hints", "{}")->settings().hints, 0u);
}

// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS and its keys (plugin.h
// v1.4): the host copies the keys after create() (TypedArgs frees the
// args' strings they came from before that), sorted and without
// duplicates; the hint alone, without keys, is valid (the plugin reads no
// label or annotation), and so is the hint without the other two.
TEST(Settings, DeclaredPodKeysAreCopiedAfterCreate) {
  auto p = make("typed_args", R"({"hints": 4, "labelKeys": ["b", "a", "b"],
                                  "annotationKeys": ["x.io/y"]})");
  EXPECT_EQ(p->settings().hints, SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS);
  EXPECT_EQ(p->pod_keys().labels(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p->pod_keys().annotations(), (std::vector<std::string>{"x.io/y"}));
  // settings() views the host's copies, not the plugin's arrays.
  ASSERT_EQ(p->settings().pod_label_key_count, 2u);
  EXPECT_EQ(p->settings().pod_label_keys[0].data,
            p->pod_keys().labels()[0].data());
  EXPECT_EQ(runtime::str_of(p->settings().pod_label_keys[1]), "b");
  ASSERT_EQ(p->settings().pod_annotation_key_count, 1u);
  EXPECT_EQ(runtime::str_of(p->settings().pod_annotation_keys[0]), "x.io/y");
  auto none = make("typed_args", R"({"hints": 4})");
  EXPECT_TRUE(none->pod_keys().labels().empty());
  EXPECT_TRUE(none->pod_keys().annotations().empty());
  EXPECT_EQ(none->settings().pod_label_keys, nullptr);
  EXPECT_EQ(make("typed_args", "{}")->settings().pod_annotation_key_count, 0u);
}

TEST(Settings, BrokenPodKeysAreRefusedNamingThePlugin) {
  const std::string where = "TypedArgs (" + abi_file("typed_args").string() +
                            ") returned broken settings from create(): ";
  EXPECT_EQ(create_error("typed_args", R"({"annotationKeys": ["a", "b"]})"),
            where +
                "pod_annotation_keys lists 2 keys (the first is \"a\") but "
                "hints lacks SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, "
                "which the keys go with; set the hint, or leave "
                "pod_annotation_keys empty (args given: {\"annotationKeys\": "
                "[\"a\", \"b\"]})");
  EXPECT_EQ(
      create_error("typed_args", R"({"hints": 3, "labelKeys": ["app"]})"),
      where +
          "hints has SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, which "
          "promises verdicts that do not change over time, but the plugin "
          "has a refresh() hook (every 60000 ms) that can change them; drop "
          "the hint, or the refresh hook (args given: {\"hints\": 3, "
          "\"labelKeys\": [\"app\"]})");
  EXPECT_THAT(create_error("typed_args", R"({"labelKeys": ["app"]})"),
              HasSubstr("pod_label_keys lists 1 key (the first is \"app\") "
                        "but hints lacks "
                        "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS"));
  EXPECT_EQ(create_error("typed_args", R"({"hints": 4, "nullLabelKeys": 3})"),
            where +
                "pod_label_keys is NULL but pod_label_key_count is 3; point "
                "pod_label_keys at the 3 keys, or set the count to 0 (args "
                "given: {\"hints\": 4, \"nullLabelKeys\": 3})");
  EXPECT_EQ(
      create_error(
          "typed_args",
          R"({"hints": 4, "labelKeys": ["a"], "emptyLabelKey": true})"),
      where +
          "pod_label_keys[1] is an empty key; list only the non-empty keys "
          "the plugin reads (an empty list declares none) (args given: "
          "{\"hints\": 4, \"labelKeys\": [\"a\"], \"emptyLabelKey\": "
          "true})");
  std::string keys;
  for (int i = 0; i <= 64; ++i) {
    keys += (i == 0 ? "\"k" : ", \"k") + std::to_string(i) + "\"";
  }
  EXPECT_THAT(
      create_error("typed_args",
                   R"({"hints": 4, "annotationKeys": [)" + keys + "]}"),
      HasSubstr(where + "pod_annotation_key_count is 65, more than the 64 "
                        "keys a list may hold; declare at most 64, or drop "
                        "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS and "
                        "the keys (args given: "));
  // 64 keys are fine.
  keys.erase(keys.rfind(", "));
  EXPECT_EQ(
      make("typed_args", R"({"hints": 4, "annotationKeys": [)" + keys + "]}")
          ->pod_keys()
          .annotations()
          .size(),
      64u);
}

// --- per-pod state -----------------------------------------------------------

// PodState reports its counters as refresh()'s error text.
std::string counters(PluginInstance& p) { return p.refresh().reason; }

TEST(PodState, OneStateServesEveryFilterAndScoreCallThenIsReleased) {
  auto p = make("pod_state");
  const std::string before = counters(*p);
  {
    auto the_pod = pod("web-0", {{"weight", "7"}});
    const PodScope scope = p->begin_pod(the_pod->view());
    ASSERT_TRUE(scope.error().empty()) << scope.error();
    EXPECT_TRUE(scope.runs_filter());
    EXPECT_TRUE(scope.runs_score());
    ASSERT_NE(scope.pod().state, nullptr);
    EXPECT_EQ(the_pod->view().state, nullptr) << "the shared view is untouched";
    auto ok = node("a", {}, 2);
    auto no = node("b", {{"reject", ""}});
    EXPECT_TRUE(p->filter(scope.pod(), ok->view()).ok());
    Verdict v = p->filter(scope.pod(), no->view());
    EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE);
    EXPECT_EQ(v.reason, "node(s) reject web-0");
    EXPECT_EQ(p->score(scope.pod(), ok->view()).score, 14);
  }
  // Exactly one begin and one end for the scope above.
  auto number = [](const std::string& text, const std::string& key) {
    const auto at = text.find(key + "=");
    return std::stol(text.substr(at + key.size() + 1));
  };
  const std::string after = counters(*p);
  EXPECT_EQ(number(after, "begun"), number(before, "begun") + 1) << after;
  EXPECT_EQ(number(after, "ended"), number(before, "ended") + 1) << after;
  EXPECT_EQ(number(after, "begun"), number(after, "ended")) << after;
}

TEST(PodState, SeparateGatesForFilterAndScore) {
  auto p = make("pod_state");
  const struct {
    const char* gate;
    bool filter;
    bool score;
  } cases[] = {{"", true, true},
               {"no-filter", false, true},
               {"no-score", true, false},
               {"none", false, false}};
  for (const auto& c : cases) {
    auto the_pod = pod("p", {{"gate", c.gate}});
    const PodScope scope = p->begin_pod(the_pod->view());
    EXPECT_EQ(scope.runs_filter(), c.filter) << c.gate;
    EXPECT_EQ(scope.runs_score(), c.score) << c.gate;
  }
}

TEST(PodState, AFailingPodBeginIsAnErrorNamingThePlugin) {
  auto p = make("pod_state");
  auto the_pod = pod("p", {{"gate", "fail"}});
  const PodScope scope = p->begin_pod(the_pod->view());
  EXPECT_EQ(scope.error(),
            "plugin PodState failed to prepare the pod (pod_begin): label "
            "gate=fail");
  EXPECT_FALSE(scope.runs_filter());
  EXPECT_FALSE(scope.runs_score());
}

TEST(PodState, PluginsWithoutPodBeginUseApplies) {
  // The v1.0 probe has applies() (annotation probe/skip) and no pod_begin.
  auto p = PluginInstance::create(load_plugin_file(abi_file("abi_probe_v1_0")),
                                  "{}");
  PodData d;
  d.name = "p";
  d.annotations = {{"probe/skip", ""}};
  PodModel skipped(std::move(d));
  const PodScope scope = p->begin_pod(skipped.view());
  EXPECT_FALSE(scope.runs_filter());
  EXPECT_FALSE(scope.runs_score());
  EXPECT_EQ(scope.pod().state, nullptr);
  const PodScope other = p->begin_pod(pod("q")->view());
  EXPECT_TRUE(other.runs_filter());
  EXPECT_TRUE(other.runs_score());
}

}  // namespace
}  // namespace schedplug::host

namespace schedplug::host {
namespace {

// dlopen finds a loaded library by any name it was opened by: a file
// loaded twice keeps the second /proc/self/fd/N as an alias. Once that
// copy is closed, another plugin opened on the same descriptor number must
// still get its own library, not the one loaded earlier.
TEST(Loader, AReusedDescriptorNumberLoadsTheNewFile) {
  const auto kept = load_plugin_file(abi_file("score_hints"));
  load_plugin_file(abi_file("score_hints"));  // loaded again, then closed
  EXPECT_EQ(load_plugin_file(abi_file("score_hints_no_score"))->name(),
            "ScoreHintsNoScore");
  EXPECT_EQ(kept->name(), "ScoreHints");
}

}  // namespace
}  // namespace schedplug::host
