// The name rules of docs/check.md.
// One file for the checks `schedplug check` and the host run before serving:
// names, create() and suggestions, on the same config() and load() helpers and
// the test plugin corpus.
#include "host/check/name_check.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "corpus_path.hpp"
#include "host/check/create_check.hpp"
#include "host/check/suggest.hpp"

namespace schedplug::host {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using testing::corpus_dir;
using testing::corpus_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

SchedulerConfig config(const std::string& profiles) {
  return parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n" +
          profiles,
      "sched.yaml");
}

std::vector<std::shared_ptr<PluginLibrary>> load(
    const std::vector<std::string>& stems) {
  std::vector<std::shared_ptr<PluginLibrary>> out;
  for (const auto& s : stems) out.push_back(load_plugin_file(corpus_file(s)));
  return out;
}

std::vector<std::string> messages(const std::vector<Diagnostic>& ds,
                                  Severity severity) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    if (d.severity == severity) out.push_back(d.message);
  }
  return out;
}

TEST(CheckNames, CaseMismatchIsOneErrorWithTheFileAndSuggestion) {
  auto ds = check_names(config(R"(profiles:
  - schedulerName: secure
    plugins:
      multiPoint:
        enabled:
          - name: hwEncrypt
)"),
                        load({"hw_encrypt"}));
  auto errors = messages(ds, Severity::kError);
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_THAT(errors[0],
              AllOf(HasSubstr("sched.yaml:8: profile \"secure\", extension "
                              "point \"multiPoint\": plugin \"hwEncrypt\" is "
                              "not an in-tree plugin and no loaded .so "
                              "reports it; did you mean \"HwEncrypt\" ("),
                    HasSubstr("hw_encrypt.so)? names are case-sensitive")));
  // HwEncrypt itself is then enabled nowhere: a warning, after the error.
  auto warnings = messages(ds, Severity::kWarning);
  ASSERT_THAT(warnings, SizeIs(1));
  EXPECT_THAT(warnings[0], HasSubstr("plugin \"HwEncrypt\" is loaded but no "
                                     "profile in sched.yaml enables it"));
  EXPECT_EQ(ds.front().severity, Severity::kError);
  EXPECT_TRUE(has_errors(ds));
}

TEST(CheckNames, FilterOnlyPluginUnderScoreIsAnError) {
  auto ds = check_names(config(R"(profiles:
  - schedulerName: secure
    plugins:
      score:
        enabled:
          - name: HwEncrypt
)"),
                        load({"hw_encrypt"}));
  auto errors = messages(ds, Severity::kError);
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_THAT(errors[0],
              AllOf(HasSubstr("sched.yaml:8: profile \"secure\", extension "
                              "point \"score\": plugin \"HwEncrypt\" ("),
                    HasSubstr("hw_encrypt.so) does not implement Score (it "
                              "offers PreFilter/Filter); enable it under "
                              "multiPoint, preFilter or filter")));
  EXPECT_THAT(messages(ds, Severity::kWarning), SizeIs(0));
}

// Enabled at filter/score without preFilter/preScore (explicit
// per-point lists, unlike multiPoint): works, with a warning that it costs
// more and how to fix the profile.
TEST(CheckNames, FilterOrScoreWithoutThePrePointIsAWarning) {
  auto ds = check_names(config(R"(profiles:
  - schedulerName: lazy
    plugins:
      filter:
        enabled:
          - name: HwEncrypt
  - schedulerName: fine
    plugins:
      preFilter:
        enabled:
          - name: HwEncrypt
      filter:
        enabled:
          - name: HwEncrypt
)"),
                        load({"hw_encrypt"}));
  EXPECT_THAT(messages(ds, Severity::kError), SizeIs(0));
  auto warnings = messages(ds, Severity::kWarning);
  ASSERT_THAT(warnings, SizeIs(1));
  EXPECT_THAT(warnings[0],
              AllOf(HasSubstr("profile \"lazy\": native plugin \"HwEncrypt\" "
                              "is enabled at filter but no native plugin is "
                              "at preFilter; this works, but costs more"),
                    HasSubstr("enable it under multiPoint instead, or under "
                              "preFilter as well")));
  EXPECT_FALSE(has_errors(ds));
}

TEST(CheckNames, PointsNativePluginsNeverImplement) {
  auto ds = check_names(config(R"(profiles:
  - plugins:
      bind:
        enabled: [{name: HwEncrypt}]
      multiPoint:
        enabled: [{name: HwEncrypt}]
)"),
                        load({"hw_encrypt"}));
  auto errors = messages(ds, Severity::kError);
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_THAT(errors[0], AllOf(HasSubstr("extension point \"bind\""),
                               HasSubstr("cannot be enabled under bind")));
}

// reserve and postFilter take any native plugin: the shim serves them to
// tell the host what became of each cycle (explicit per-point lists need
// them for `schedplug explain`).
TEST(CheckNames, ReserveAndPostFilterTakeNativePlugins) {
  auto ds = check_names(config(R"(profiles:
  - plugins:
      preFilter:
        enabled: [{name: HwEncrypt}]
      filter:
        enabled: [{name: HwEncrypt}]
      reserve:
        enabled: [{name: HwEncrypt}]
      postFilter:
        enabled: [{name: HwEncrypt}]
)"),
                        load({"hw_encrypt"}));
  EXPECT_THAT(messages(ds, Severity::kError), SizeIs(0));
}

TEST(CheckNames, InTreeNamesAreNeverMissingNativePlugins) {
  auto ds = check_names(config(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: NodeResourcesFit}, {name: PodGroupPodsCount}]
      queueSort:
        enabled: [{name: PrioritySort}]
      filter:
        disabled: [{name: "*"}, {name: TaintToleration}]
)"),
                        {});
  EXPECT_TRUE(ds.empty()) << ds.front().message;
}

TEST(CheckNames, NearMatchAndInTreeNearMatch) {
  auto ds = check_names(config(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrpyt}, {name: NodeAfinity}, {name: Zzz}]
)"),
                        load({"hw_encrypt"}));
  auto errors = messages(ds, Severity::kError);
  ASSERT_THAT(errors, SizeIs(3));
  EXPECT_THAT(errors[0], HasSubstr("did you mean \"HwEncrypt\" ("));
  EXPECT_THAT(errors[0], ::testing::Not(HasSubstr("case-sensitive")));
  EXPECT_THAT(errors[1], HasSubstr("did you mean \"NodeAffinity\" (in-tree)?"));
  EXPECT_THAT(errors[2], HasSubstr("put the plugin's .so in the plugins "
                                   "directory, or fix the name (loaded: "
                                   "HwEncrypt)"));
}

TEST(CheckNames, EnabledTwiceAtOnePoint) {
  auto ds = check_names(config(R"(profiles:
  - plugins:
      filter:
        enabled: [{name: HwEncrypt}, {name: HwEncrypt}]
)"),
                        load({"hw_encrypt"}));
  EXPECT_THAT(messages(ds, Severity::kError),
              ElementsAre(HasSubstr("is enabled twice")));
}

TEST(CheckNames, WarningsForDisabledAndPluginConfigOfUnknownNames) {
  auto ds = check_names(config(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}]
        disabled: [{name: HwEncrypted}]
    pluginConfig:
      - name: hwencrypt
        args: {a: 1}
)"),
                        load({"hw_encrypt"}));
  EXPECT_FALSE(has_errors(ds));
  auto warnings = messages(ds, Severity::kWarning);
  ASSERT_THAT(warnings, SizeIs(2));
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("disables plugin \"HwEncrypted\""),
                                 HasSubstr("did you mean \"HwEncrypt\"")));
  EXPECT_THAT(warnings[1],
              AllOf(HasSubstr("sched.yaml:9: profile \"default-scheduler\": "
                              "pluginConfig for \"hwencrypt\" matches no"),
                    HasSubstr("names are case-sensitive")));
}

TEST(CheckNames, LoadProblemsAreErrorsAndExplainMissingNames) {
  LoadResult loaded = load_plugin_directory(corpus_dir());
  auto ds = check_names(config(R"(profiles:
  - plugins:
      multiPoint:
        enabled:
          - name: GoodFilter
          - name: Twin
          - name: network_latency
)"),
                        loaded.plugins, loaded.problems);
  auto errors = messages(ds, Severity::kError);
  // Every load problem, then the two names no usable .so reports.
  ASSERT_EQ(errors.size(), loaded.problems.size() + 2);
  EXPECT_THAT(errors[errors.size() - 2],
              AllOf(HasSubstr("plugin \"Twin\" is not an in-tree plugin"),
                    HasSubstr("twin_a.so names it but failed to load")));
  EXPECT_THAT(errors.back(),
              HasSubstr("snake_name.so names it but failed to load"));
  // Loaded but never enabled: warnings.
  auto warnings = messages(ds, Severity::kWarning);
  EXPECT_THAT(warnings,
              ::testing::Contains(HasSubstr("\"GoodScorer\" is "
                                            "loaded but no profile")));
  EXPECT_THAT(warnings, ::testing::Not(::testing::Contains(
                            HasSubstr("\"GoodFilter\" is loaded"))));
}

TEST(CheckCreate, BadArgsAndThrowingCreateAreErrors) {
  SchedulerConfig c = config(R"(profiles:
  - schedulerName: s
    plugins:
      multiPoint:
        enabled: [{name: StrictArgs}, {name: CreateThrows}, {name: HwEncrypt}]
    pluginConfig:
      - name: StrictArgs
        args: {limit: 3}
)");
  auto plugins = load({"strict_args", "create_throws", "hw_encrypt"});
  auto ds = check_create(c, resolve_profiles(c, plugins));
  ASSERT_THAT(ds, SizeIs(2));
  EXPECT_THAT(ds[0].message,
              AllOf(HasSubstr("sched.yaml:9: profile \"s\": StrictArgs ("),
                    HasSubstr("rejected its args: args.threshold is required"),
                    HasSubstr(R"({"limit":3})")));
  EXPECT_THAT(ds[1].message,
              AllOf(HasSubstr("sched.yaml:4: profile \"s\": CreateThrows"),
                    HasSubstr("plugin CreateThrows threw through the C ABI")));
}

// `schedplug check` creates every instance as the host does, so it reports
// the settings the host refuses: here a promise that verdicts never change
// over time from a plugin with a refresh hook.
TEST(CheckCreate, BrokenSettingsAreErrors) {
  SchedulerConfig c = config(R"(profiles:
  - schedulerName: s
    plugins:
      multiPoint:
        enabled: [{name: TypedArgs}]
    pluginConfig:
      - name: TypedArgs
        args: {hints: 2}
)");
  const std::vector<std::shared_ptr<PluginLibrary>> plugins = {load_plugin_file(
      std::filesystem::path(SCHEDPLUG_ABI_DIR) / "typed_args.so")};
  auto ds = check_create(c, resolve_profiles(c, plugins));
  ASSERT_THAT(ds, SizeIs(1));
  EXPECT_EQ(ds[0].severity, Severity::kError);
  EXPECT_THAT(
      ds[0].message,
      AllOf(HasSubstr("sched.yaml:9: profile \"s\": TypedArgs ("),
            HasSubstr(") returned broken settings from create(): hints has "
                      "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, which "
                      "promises verdicts that do not change over time, but "
                      "the plugin has a refresh() hook (every 60000 ms) that "
                      "can change them; drop the hint, or the refresh hook")));
}

// The same for the pod keys of SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
// (plugin.h v1.4): keys declared without the hint.
TEST(CheckCreate, PodKeysWithoutTheirHintAreErrors) {
  SchedulerConfig c = config(R"(profiles:
  - schedulerName: s
    plugins:
      multiPoint:
        enabled: [{name: TypedArgs}]
    pluginConfig:
      - name: TypedArgs
        args: {annotationKeys: [team.io/tier]}
)");
  const std::vector<std::shared_ptr<PluginLibrary>> plugins = {load_plugin_file(
      std::filesystem::path(SCHEDPLUG_ABI_DIR) / "typed_args.so")};
  auto ds = check_create(c, resolve_profiles(c, plugins));
  ASSERT_THAT(ds, SizeIs(1));
  EXPECT_EQ(ds[0].severity, Severity::kError);
  EXPECT_THAT(
      ds[0].message,
      AllOf(HasSubstr("sched.yaml:9: profile \"s\": TypedArgs ("),
            HasSubstr(") returned broken settings from create(): "
                      "pod_annotation_keys lists 1 key (the first is "
                      "\"team.io/tier\") but hints lacks "
                      "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, which "
                      "the keys go with; set the hint, or leave "
                      "pod_annotation_keys empty")));
}

// HintedFilter and HintedScorer declare the hints of their "hints" arg.
std::vector<std::shared_ptr<PluginLibrary>> hinted() {
  const std::filesystem::path dir(SCHEDPLUG_ABI_DIR);
  return {load_plugin_file(dir / "hinted_filter.so"),
          load_plugin_file(dir / "hinted_scorer.so")};
}

// One profile per args of `plugin`, named p0, p1, ...
SchedulerConfig profiles_with(const std::string& plugin,
                              const std::vector<std::string>& args) {
  std::string yaml = "profiles:\n";
  for (size_t i = 0; i < args.size(); ++i) {
    yaml += "  - schedulerName: p" + std::to_string(i) +
            "\n    plugins:\n      multiPoint:\n        enabled: [{name: " +
            plugin + "}]\n    pluginConfig:\n      - name: " + plugin +
            "\n        args: " + args[i] + "\n";
  }
  return config(yaml);
}

// A filter hint on a plugin without a filter hook buys nothing: a warning
// per hint, pointing at the plugin's pluginConfig entry.
TEST(CheckCreate, FilterHintsWithoutAFilterAreWarnings) {
  const SchedulerConfig c = profiles_with("HintedScorer", {"{hints: 7}"});
  auto ds = check_create(c, resolve_profiles(c, hinted()));
  ASSERT_THAT(ds, SizeIs(3));
  EXPECT_THAT(messages(ds, Severity::kError), SizeIs(0));
  for (const char* hint : {"SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS",
                           "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY",
                           "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS"}) {
    EXPECT_THAT(
        messages(ds, Severity::kWarning),
        Contains(std::string("sched.yaml:9: profile \"p0\": plugin "
                             "\"HintedScorer\" declares ") +
                 hint +
                 " but has no filter hook, so the hint buys nothing; remove "
                 "it from the plugin's hints (its descriptor, or the "
                 "settings its create() sets)"));
  }
}

// Declared pod keys narrow batching signatures and kept verdicts, both of
// which need SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY.
TEST(CheckCreate, PodKeysWithoutIdentityAreAWarning) {
  // IGNORES_NODE_PODS + READS_DECLARED_POD_KEYS, and the keys hint alone.
  const SchedulerConfig c =
      profiles_with("HintedFilter", {"{hints: 5}", "{hints: 4}"});
  auto ds = check_create(c, resolve_profiles(c, hinted()));
  ASSERT_THAT(ds, SizeIs(2));
  EXPECT_EQ(ds[0].severity, Severity::kWarning);
  EXPECT_EQ(
      ds[0].message,
      "sched.yaml:9: profile \"p0\": plugin \"HintedFilter\" declares "
      "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS without "
      "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, so the hint buys nothing "
      "(the scheduler narrows a pod's batching signature (and, with "
      "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS as well, its kept verdicts) "
      "to the declared keys only for a filter that ignores the pod's name "
      "and uid); declare SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY too if "
      "the plugin keeps that promise, or remove "
      "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS");
  EXPECT_THAT(ds[1].message,
              AllOf(HasSubstr("sched.yaml:16: profile \"p1\""),
                    HasSubstr("READS_DECLARED_POD_KEYS without "
                              "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY")));
}

// Each of these buys something: node pods alone (preemption dry runs),
// identity alone (batching; a filter that counts the node's pods cannot
// promise more), identity with keys (narrower signatures), all three
// (kept verdicts). And no hint at all promises nothing.
TEST(CheckCreate, HintsThatBuySomethingAreNotWarnings) {
  const SchedulerConfig c = profiles_with(
      "HintedFilter",
      {"{hints: 1}", "{hints: 2}", "{hints: 6}", "{hints: 7}", "{hints: 0}"});
  EXPECT_THAT(check_create(c, resolve_profiles(c, hinted())), SizeIs(0));
  const SchedulerConfig scorer = profiles_with("HintedScorer", {"{hints: 0}"});
  EXPECT_THAT(check_create(scorer, resolve_profiles(scorer, hinted())),
              SizeIs(0));
}

TEST(Suggest, ClosestName) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(closest_name("hwencrypt", {"Other", "HwEncrypt"}), "HwEncrypt");
  EXPECT_EQ(closest_name("NodeAfinity", {"NodeAffinity", "NodeName"}),
            "NodeAffinity");
  EXPECT_EQ(closest_name("Completely", {"HwEncrypt"}), std::nullopt);
}

TEST(InTree, KnowsTheUpstreamNames) {
  EXPECT_TRUE(is_in_tree_plugin("NodeResourcesFit"));
  EXPECT_TRUE(is_in_tree_plugin("DefaultPreemption"));
  EXPECT_FALSE(is_in_tree_plugin("nodeResourcesFit"));
  EXPECT_FALSE(is_in_tree_plugin("HwEncrypt"));
  EXPECT_EQ(in_tree_plugin_names().size(), 24u);
}

}  // namespace
}  // namespace schedplug::host
