// resolve_profiles against upstream's multiPoint expansion rules.
#include "host/config/resolve.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "corpus_path.hpp"

namespace schedplug::host {
namespace {

using ::testing::AllOf;
using testing::corpus_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::shared_ptr<PluginLibrary>> corpus_plugins() {
  return {load_plugin_file(corpus_file("good_filter")),
          load_plugin_file(corpus_file("good_scorer")),
          load_plugin_file(corpus_file("hw_encrypt")),
          load_plugin_file(corpus_file("own_normalize")),
          load_plugin_file(corpus_file("hook_throws"))};
}

std::vector<ResolvedProfile> resolve(const std::string& profiles) {
  return resolve_profiles(
      parse_scheduler_config("apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n" +
                                 profiles,
                             "sched.yaml"),
      corpus_plugins());
}

std::vector<std::string> names(const std::vector<ResolvedPlugin>& list) {
  std::vector<std::string> out;
  for (const auto& p : list) out.push_back(p.library->name());
  return out;
}

TEST(Resolve, MultiPointSplitsByCapabilityAndSkipsInTree) {
  auto r = resolve(R"(profiles:
  - schedulerName: s
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: NodeAffinity
          - name: GoodScorer
            weight: 4
          - name: HookThrows
          - name: Unknown
)");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].scheduler_name, "s");
  EXPECT_THAT(names(r[0].filters), ElementsAre("HwEncrypt", "HookThrows"));
  EXPECT_THAT(names(r[0].scorers), ElementsAre("GoodScorer", "HookThrows"));
  EXPECT_EQ(r[0].scorers[0].weight, 4);
  EXPECT_EQ(r[0].scorers[1].weight, 1);
  EXPECT_THAT(names(r[0].plugins),
              ElementsAre("HwEncrypt", "GoodScorer", "HookThrows"));
  EXPECT_EQ(r[0].plugins[0].args_json, "{}");
}

TEST(Resolve, UpstreamOrderOverridesThenMultiPointThenTheRest) {
  // filter point: GoodFilter (specific only), HookThrows (also multiPoint:
  // an override), in that order. Upstream's order is overrides first
  // (HookThrows), then multiPoint-only (HwEncrypt), then the rest
  // (GoodFilter).
  auto r = resolve(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}, {name: HookThrows}]
      filter:
        enabled: [{name: GoodFilter}, {name: HookThrows}]
)");
  EXPECT_THAT(names(r[0].filters),
              ElementsAre("HookThrows", "HwEncrypt", "GoodFilter"));
}

TEST(Resolve, DisabledAtAPointRemovesMultiPointPluginsThere) {
  auto r = resolve(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}, {name: HookThrows}]
      filter:
        disabled: [{name: HookThrows}]
)");
  EXPECT_THAT(names(r[0].filters), ElementsAre("HwEncrypt"));
  EXPECT_THAT(names(r[0].scorers), ElementsAre("HookThrows"));
}

TEST(Resolve, StarSkipsMultiPointExpansionButKeepsExplicitEntries) {
  auto r = resolve(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}, {name: HookThrows}]
      filter:
        enabled: [{name: GoodFilter}]
        disabled: [{name: "*"}]
)");
  EXPECT_THAT(names(r[0].filters), ElementsAre("GoodFilter"));
  EXPECT_THAT(names(r[0].scorers), ElementsAre("HookThrows"));
}

TEST(Resolve, ScoreListWeightWinsOverMultiPoint) {
  auto r = resolve(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: GoodScorer, weight: 5}, {name: OwnNormalize, weight: 7}]
      score:
        enabled: [{name: GoodScorer}]
)");
  // GoodScorer is an override (first), its Score entry has no weight: 1.
  EXPECT_THAT(names(r[0].scorers), ElementsAre("GoodScorer", "OwnNormalize"));
  EXPECT_EQ(r[0].scorers[0].weight, 1);
  EXPECT_EQ(r[0].scorers[1].weight, 7);
}

TEST(Resolve, PluginNotImplementingAPointIsLeftOut) {
  auto r = resolve(R"(profiles:
  - plugins:
      score:
        enabled: [{name: HwEncrypt}]
)");
  EXPECT_TRUE(r[0].scorers.empty());
}

TEST(Resolve, HostSettingsAreStrippedFromArgs) {
  auto r = resolve(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}]
    pluginConfig:
      - name: HwEncrypt
        args:
          level: 3
          schedplug:
            failurePolicy: Ignore
            timeout: 1.5s
)");
  ASSERT_EQ(r[0].plugins.size(), 1u);
  EXPECT_EQ(r[0].plugins[0].args_json, R"({"level":3})");
  EXPECT_EQ(r[0].plugins[0].settings.failure_policy, "Ignore");
  EXPECT_EQ(r[0].plugins[0].settings.timeout_ms, 1500);
  EXPECT_EQ(r[0].filters[0].args_json, R"({"level":3})");
}

std::string resolve_error(const std::string& schedplug_yaml) {
  try {
    resolve(R"(profiles:
  - schedulerName: s
    plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}]
    pluginConfig:
      - name: HwEncrypt
        args:
          schedplug:
)" + schedplug_yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(resolved without error)";
}

TEST(Resolve, BadHostSettingsAreConfigErrors) {
  EXPECT_THAT(resolve_error("            failurePolicy: Sometimes\n"),
              HasSubstr("sched.yaml:9: profile \"s\", pluginConfig "
                        "\"HwEncrypt\": args.schedplug.failurePolicy is "
                        "\"Sometimes\"; it must be \"Fail\" or \"Ignore\""));
  EXPECT_THAT(resolve_error("            timeout: fast\n"),
              HasSubstr("args.schedplug.timeout is \"fast\""));
  EXPECT_THAT(resolve_error("            timeout: 50\n"),
              HasSubstr("like \"50ms\""));
  EXPECT_THAT(resolve_error("            timeout: 100us\n"),
              HasSubstr("whole milliseconds"));
  EXPECT_THAT(resolve_error("            retries: 3\n"),
              HasSubstr("unknown key \"retries\""));
  EXPECT_THAT(resolve_error("            - a\n"),
              HasSubstr("args.schedplug must be a mapping"));
  EXPECT_THAT(resolve_error("            timeout: 1m30s\n"),
              HasSubstr("resolved without error"));
}

// Resolves profile "s", which enables HwEncrypt and GoodScorer, with this
// pluginConfig list, collecting the problems instead of throwing.
std::vector<std::string> problems_of(
    const std::string& plugin_config,
    std::vector<ResolvedProfile>* resolved = nullptr) {
  std::vector<std::string> problems;
  auto r = resolve_profiles(
      parse_scheduler_config("apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n"
                             R"(profiles:
  - schedulerName: s
    plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}, {name: GoodScorer}]
    pluginConfig:)" + plugin_config,
                             "sched.yaml"),
      corpus_plugins(), problems);
  if (resolved != nullptr) *resolved = std::move(r);
  return problems;
}

// args.schedplug.shadow names a file inside the plugin directory: an
// absolute path or one with a ".." component could name any file on the
// disk (and a replayed recording's configuration is anyone's input), so
// both are refused with what to write instead, and the setting stays
// empty (nothing is loaded).
TEST(Resolve, AShadowPathMustStayInsideThePluginDirectory) {
  const std::string instead =
      "; a shadow candidate is loaded only from the plugin directory: copy "
      "the file into it (a subdirectory such as candidates/ keeps it apart "
      "from the plugins) and write its path relative to that directory, "
      "without \"..\", like \"candidates/hw_encrypt.so\"";
  EXPECT_THAT(resolve_error("            shadow: /opt/evil/hw_encrypt.so\n"),
              HasSubstr("sched.yaml:9: profile \"s\", pluginConfig "
                        "\"HwEncrypt\": args.schedplug.shadow is "
                        "\"/opt/evil/hw_encrypt.so\", an absolute path" +
                        instead));
  for (const char* climbing :
       {"../hw_encrypt.so", "candidates/../../hw_encrypt.so", "..",
        "candidates/.."}) {
    EXPECT_THAT(
        resolve_error(std::string("            shadow: \"") + climbing +
                      "\"\n"),
        HasSubstr(std::string("args.schedplug.shadow is \"") + climbing +
                  "\", a path that climbs out with \"..\"" + instead))
        << climbing;
  }
  for (const char* inside :
       {"candidates/hw_encrypt.so", "./hw_encrypt.so", "a..b/c..so"}) {
    EXPECT_THAT(
        resolve_error(std::string("            shadow: \"") + inside + "\"\n"),
        HasSubstr("resolved without error"))
        << inside;
    EXPECT_EQ(shadow_path_problem(inside), "") << inside;
  }
  std::vector<ResolvedProfile> resolved;
  const auto problems = problems_of(R"(
      - name: HwEncrypt
        args: {schedplug: {shadow: /tmp/hw_encrypt.so}})",
                                    &resolved);
  ASSERT_EQ(problems.size(), 1u);
  ASSERT_EQ(resolved.size(), 1u);
  for (const ResolvedPlugin& p : resolved[0].plugins)
    EXPECT_EQ(p.settings.shadow, "") << p.library->name();
}

// simulatorAnnotations (docs/simulator-annotations.md): a boolean, read and
// stripped like the other keys; one setting per profile, so two plugins of
// one profile saying true and false are refused.
TEST(Resolve, SimulatorAnnotationsIsABooleanPerProfile) {
  auto r = resolve(R"(profiles:
  - plugins:
      multiPoint:
        enabled: [{name: HwEncrypt}, {name: GoodScorer}]
    pluginConfig:
      - name: HwEncrypt
        args:
          schedplug:
            simulatorAnnotations: true
)");
  ASSERT_EQ(r[0].plugins.size(), 2u);
  EXPECT_EQ(r[0].plugins[0].settings.simulator_annotations, true);
  EXPECT_EQ(r[0].plugins[0].args_json, "{}");
  EXPECT_FALSE(r[0].plugins[1].settings.simulator_annotations.has_value());

  EXPECT_THAT(resolve_error("            simulatorAnnotations: \"yes\"\n"),
              HasSubstr("sched.yaml:9: profile \"s\", pluginConfig "
                        "\"HwEncrypt\": args.schedplug.simulatorAnnotations "
                        "is \"yes\"; write true"));
  EXPECT_THAT(resolve_error("            simulatorAnnotations: false\n"),
              HasSubstr("resolved without error"));

  const std::vector<std::string> problems = problems_of(R"(
      - name: HwEncrypt
        args:
          schedplug: {simulatorAnnotations: true}
      - name: GoodScorer
        args:
          schedplug: {simulatorAnnotations: false}
)");
  ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems[0],
            "sched.yaml: profile \"s\": pluginConfig \"HwEncrypt\" sets "
            "args.schedplug.simulatorAnnotations true but \"GoodScorer\" sets "
            "it false; it is one setting for the whole profile: write it on "
            "one native plugin only");
}

// Every bad setting is reported, not only the first, and the profile is
// still resolved with the defaults.
TEST(Resolve, CollectsEveryBadSettingAndResolvesAnyway) {
  std::vector<ResolvedProfile> r;
  const std::vector<std::string> problems = problems_of(R"(
      - name: HwEncrypt
        args:
          schedplug:
            failurePolicy: Sometimes
            timeout: fast
      - name: GoodScorer
        args:
          schedplug:
            retries: 3
)",
                                                        &r);
  ASSERT_EQ(problems.size(), 3u) << ::testing::PrintToString(problems);
  EXPECT_THAT(problems[0], HasSubstr("failurePolicy is \"Sometimes\""));
  EXPECT_THAT(problems[1], HasSubstr("timeout is \"fast\""));
  EXPECT_THAT(problems[2], HasSubstr("unknown key \"retries\""));
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].plugins.size(), 2u);
  EXPECT_EQ(r[0].plugins[0].settings.failure_policy, "Fail");
  EXPECT_EQ(r[0].plugins[0].args_json, "{}");
}

TEST(Resolve, ConfigPinsAreReadCheckedAndNotPassedToThePlugin) {
  const SchedulerConfig config = parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: a\n"
      "  plugins: {filter: {enabled: [{name: HwEncrypt}]}}\n"
      "  pluginConfig:\n"
      "  - name: HwEncrypt\n"
      "    args: {x: 1, schedplug: {sha256: \"" +
          std::string(64, 'A') +
          "\"}}\n"
          "  - name: GoodFilter\n"
          "    args: {schedplug: {sha256: 12}}\n"
          "- schedulerName: b\n"
          "  pluginConfig:\n"
          "  - name: HwEncrypt\n"
          "    args: {schedplug: {sha256: \"" +
          std::string(64, 'c') + "\"}}\n",
      "sched.yaml");
  std::vector<std::string> problems;
  const auto pins = config_plugin_pins(config, problems);
  ASSERT_EQ(pins.size(), 1u);
  EXPECT_EQ(pins.at("HwEncrypt"), std::string(64, 'a'));  // lowercased
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], AllOf(HasSubstr("pluginConfig \"GoodFilter\""),
                                 HasSubstr("args.schedplug.sha256 is 12")));
  EXPECT_THAT(problems[1], AllOf(HasSubstr("profile \"b\""),
                                 HasSubstr("but profile \"a\" pins")));
  // The key is the host's: accepted, and stripped from the plugin's args.
  std::vector<std::string> resolve_problems;
  const auto r = resolve_profiles(config, corpus_plugins(), resolve_problems);
  EXPECT_TRUE(resolve_problems.empty()) << resolve_problems.front();
  ASSERT_EQ(r[0].filters.size(), 1u);
  EXPECT_EQ(r[0].filters[0].args_json, R"({"x":1})");
}

}  // namespace
}  // namespace schedplug::host
