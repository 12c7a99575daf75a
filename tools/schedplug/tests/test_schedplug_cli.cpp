// Runs the built `schedplug` binary and checks exit codes and messages.
// One file: every subcommand (check, inspect, bundle) runs through the same
// run() and Outcome helpers on the built binary and the test corpus.
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Outcome run(const std::string& binary, const std::string& args) {
  // ctest runs tests in parallel processes: one output file per process.
  const std::string base =
      ::testing::TempDir() + "/schedplug-cli-" + std::to_string(::getpid());
  const std::string out = base + ".out";
  const std::string err = base + ".err";
  const std::string cmd =
      "'" + binary + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

Outcome schedplug(const std::string& args) { return run(SCHEDPLUG_BIN, args); }

std::string fixture(const std::string& name) {
  return std::string(SCHEDPLUG_FIXTURES) + "/" + name;
}
std::string plugin_dir(const std::string& name) {
  return std::string(SCHEDPLUG_PLUGIN_DIRS) + "/" + name;
}

std::vector<std::string> lines_starting(const std::string& text,
                                        const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

TEST(Check, CaseMismatchIsExactlyOneErrorNamingEverything) {
  Outcome r = schedplug("check --config " + fixture("hw_case_mismatch.yaml") +
                        " --plugins " + plugin_dir("hw.d"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto errors = lines_starting(r.out, "error: ");
  ASSERT_EQ(errors.size(), 1u) << r.out;
  EXPECT_THAT(errors[0], AllOf(HasSubstr("hw_case_mismatch.yaml:9"),
                               HasSubstr("profile \"secure-scheduler\""),
                               HasSubstr("extension point \"multiPoint\""),
                               HasSubstr("hw.d/hw_encrypt.so"),
                               HasSubstr("did you mean \"HwEncrypt\""),
                               HasSubstr("names are case-sensitive")));
  EXPECT_THAT(r.out, HasSubstr("1 error, 1 warning"));
}

TEST(Check, FilterOnlyPluginUnderScoreIsExactlyOneError) {
  Outcome r = schedplug("check --config " + fixture("hw_under_score.yaml") +
                        " --plugins " + plugin_dir("hw.d"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto errors = lines_starting(r.out, "error: ");
  ASSERT_EQ(errors.size(), 1u) << r.out;
  EXPECT_THAT(errors[0], AllOf(HasSubstr("hw_under_score.yaml:9"),
                               HasSubstr("profile \"secure-scheduler\""),
                               HasSubstr("extension point \"score\""),
                               HasSubstr("hw.d/hw_encrypt.so"),
                               HasSubstr("does not implement Score")));
  EXPECT_THAT(r.out, HasSubstr("1 error, 0 warnings"));
}

TEST(Check, SampleHwEncryptPluginCaseMismatch) {
#ifdef SCHEDPLUG_SAMPLE_HW_ENCRYPT
  // The real sample plugin (plugins/hw-encrypt), in its own directory.
  const std::string dir =
      ::testing::TempDir() + "/sample-hw-" + std::to_string(::getpid()) + ".d";
  ASSERT_EQ(
      std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir +
                   "' && cp '" SCHEDPLUG_SAMPLE_HW_ENCRYPT "' '" + dir + "/'")
                      .c_str()),
      0);
  Outcome r = schedplug("check --config " + fixture("hw_case_mismatch.yaml") +
                        " --plugins " + dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto errors = lines_starting(r.out, "error: ");
  ASSERT_EQ(errors.size(), 1u) << r.out;
  EXPECT_THAT(errors[0], AllOf(HasSubstr("profile \"secure-scheduler\""),
                               HasSubstr("extension point \"multiPoint\""),
                               HasSubstr("hw_encrypt.so"),
                               HasSubstr("did you mean \"HwEncrypt\"")));
#else
  GTEST_SKIP() << "plugins/hw-encrypt is not part of this build";
#endif
}

TEST(Check, CleanConfigExitsZero) {
  Outcome r = schedplug("check --config " + fixture("good.yaml") +
                        " --plugins " + plugin_dir("good.d"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok: 4 plugins in"));
  EXPECT_THAT(r.out, HasSubstr("1 profile in"));
}

TEST(Check, WarningsOnlyExitZero) {
  Outcome r = schedplug("check --config " + fixture("warnings_only.yaml") +
                        " --plugins " + plugin_dir("good.d"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(lines_starting(r.out, "error: ").empty()) << r.out;
  auto warnings = lines_starting(r.out, "warning: ");
  EXPECT_EQ(warnings.size(), 3u) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("\"GoodScorer\" is loaded but no "
                                     "profile"),
                           HasSubstr("pluginConfig for \"GoodFiltre\""),
                           HasSubstr("did you mean \"GoodFilter\"")));
  EXPECT_THAT(r.out, HasSubstr("0 errors, 3 warnings"));
}

TEST(Check, EveryProblemAtOnceErrorsFirst) {
  Outcome r = schedplug("check --config " + fixture("many_problems.yaml") +
                        " --plugins " + plugin_dir("good.d"));
  EXPECT_EQ(r.exit_code, 1);
  auto errors = lines_starting(r.out, "error: ");
  ASSERT_EQ(errors.size(), 4u) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("plugin \"hwencrypt\""),
                           HasSubstr("plugin \"GoodScorer\" ("),
                           HasSubstr("does not implement Filter"),
                           HasSubstr("did you mean \"NodeAffinity\" "
                                     "(in-tree)?"),
                           HasSubstr("StrictArgs ("),
                           HasSubstr("args.threshold is required")));
  // Every error line comes before the first warning line.
  const auto last_error = r.out.rfind("error: ");
  const auto first_warning = r.out.find("warning: ");
  ASSERT_NE(first_warning, std::string::npos);
  EXPECT_LT(last_error, first_warning);
}

// A bad weight and a bad failurePolicy used to stop the check at the
// first of them, hiding the rest.
TEST(Check, BadWeightBadFailurePolicyAndWrongNameAllReported) {
  Outcome r = schedplug("check --config " + fixture("three_problems.yaml") +
                        " --plugins " + plugin_dir("good.d"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto errors = lines_starting(r.out, "error: ");
  ASSERT_EQ(errors.size(), 3u) << r.out;
  EXPECT_THAT(errors[0],
              AllOf(HasSubstr("three_problems.yaml:13: "),
                    HasSubstr("the weight of plugin \"GoodScorer\" must be "
                              "an integer, not \"heavy\"")));
  EXPECT_THAT(errors[1], AllOf(HasSubstr("three_problems.yaml:14: "),
                               HasSubstr("plugin \"GoodFiltr\" is not an "
                                         "in-tree plugin"),
                               HasSubstr("did you mean \"GoodFilter\"")));
  EXPECT_THAT(errors[2],
              AllOf(HasSubstr("three_problems.yaml:22: "),
                    HasSubstr("args.schedplug.failurePolicy is "
                              "\"Sometimes\"; it must be \"Fail\" or "
                              "\"Ignore\"")));
  EXPECT_THAT(r.out, HasSubstr("3 errors, "));
}

TEST(Check, NoCreateSkipsCreate) {
  Outcome r =
      schedplug("check --no-create --config " + fixture("many_problems.yaml") +
                " --plugins " + plugin_dir("good.d"));
  EXPECT_THAT(r.out, Not(HasSubstr("args.threshold is required")));
  EXPECT_EQ(lines_starting(r.out, "error: ").size(), 3u) << r.out;
}

TEST(Check, BrokenCorpusEveryFileItsOwnError) {
  Outcome r = schedplug("check --config " + fixture("corpus.yaml") +
                        " --plugins " + SCHEDPLUG_CORPUS_DIR);
  EXPECT_EQ(r.exit_code, 1);
  auto errors = lines_starting(r.out, "error: ");
  // 10 files fail to load (incl. the two twins in one message), and
  // CreateThrows fails in create().
  EXPECT_EQ(errors.size(), 11u) << r.out;
  for (const char* stem : {"not_elf", "no_entry", "abi_newer", "abi_older",
                           "small_descriptor", "empty_name", "snake_name",
                           "normalize_only", "refresh_no_period", "twin_a"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("corpus.d/") + stem + ".so: "))
        << stem;
  }
  EXPECT_THAT(r.out, HasSubstr("plugin CreateThrows threw through the C ABI"));
  EXPECT_THAT(r.out, Not(HasSubstr("GoodFilter\" is not")));
}

// The line of `config` an "error: FILE:LINE: ..." message points at; 0
// when it names no line of it (a plugin file's message).
long config_line(const std::string& message, const std::string& config) {
  const size_t at = message.find(config + ":");
  if (at == std::string::npos) return 0;
  return std::atol(message.c_str() + at + config.size() + 1);
}

// schedplug-host refuses to start on the problems `schedplug check` finds,
// and prints every one of them, exactly as check does (one code path:
// host/check/startup_check.hpp): the same sentences, errors first, then
// warnings, each in the order of the configuration file's lines: with two wrong
// names and one wrong arg, the host once reported only the names.
TEST(CheckAndHost, ReportEveryProblemWithTheSameSentencesInFileLineOrder) {
  const std::pair<const char*, const char*> cases[] = {
      {"names_and_args.yaml", "good.d"},
      {"many_problems.yaml", "good.d"},
      {"three_problems.yaml", "good.d"},
      {"hw_case_mismatch.yaml", "hw.d"},
      {"corpus.yaml", SCHEDPLUG_CORPUS_DIR}};
  for (const auto& [config_name, dir_name] : cases) {
    SCOPED_TRACE(config_name);
    const std::string config = fixture(config_name);
    const std::string dir =
        dir_name[0] == '/' ? dir_name : plugin_dir(dir_name);
    const Outcome check =
        schedplug("check --config " + config + " --plugins " + dir);
    EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
    const std::string socket = ::testing::TempDir() + "/parity-" +
                               std::to_string(::getpid()) + ".sock";
    const Outcome host = run(SCHEDPLUG_HOST_BIN,
                             "--config " + config + " --plugins " + dir +
                                 " --listen unix://" + socket + " --no-watch");
    EXPECT_EQ(host.exit_code, 1) << host.out << host.err;
    EXPECT_THAT(host.err, HasSubstr("schedplug-host refuses to start"));

    std::vector<std::string> checked, hosted;
    for (const char* prefix : {"error: ", "warning: "}) {
      for (auto& l : lines_starting(check.out, prefix)) checked.push_back(l);
      for (auto& l : lines_starting(host.err, prefix)) hosted.push_back(l);
    }
    ASSERT_FALSE(checked.empty()) << check.out;
    EXPECT_EQ(hosted, checked) << "host:\n"
                               << host.err << "\ncheck:\n"
                               << check.out;
    // Errors first, then warnings; each in file-line order.
    EXPECT_EQ(lines_starting(check.out, "error: ").size() +
                  lines_starting(check.out, "warning: ").size(),
              checked.size());
    for (const char* prefix : {"error: ", "warning: "}) {
      long last = 0;
      for (const std::string& l : lines_starting(check.out, prefix)) {
        const long line = config_line(l, config);
        EXPECT_GE(line, last) << l;
        last = std::max(last, line);
      }
    }
  }
  // The issue's case: both names and the args, the args first (line 9).
  const Outcome r =
      schedplug("check --config " + fixture("names_and_args.yaml") +
                " --plugins " + plugin_dir("good.d"));
  const auto errors = lines_starting(r.out, "error: ");
  ASSERT_EQ(errors.size(), 3u) << r.out;
  EXPECT_THAT(errors[0], AllOf(HasSubstr("names_and_args.yaml:9: profile "
                                         "\"default-scheduler\": StrictArgs"),
                               HasSubstr("rejected its args")));
  EXPECT_THAT(errors[1], HasSubstr("names_and_args.yaml:15:"));
  EXPECT_THAT(errors[1], HasSubstr("\"GoodFiltr\""));
  EXPECT_THAT(errors[2], HasSubstr("names_and_args.yaml:16:"));
  EXPECT_THAT(errors[2], HasSubstr("\"goodScorer\""));
}

TEST(Check, BadExtensionPointIsAnErrorWithSuggestion) {
  Outcome r = schedplug("check --config " + fixture("bad_point.yaml") +
                        " --plugins " + plugin_dir("hw.d"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, AllOf(HasSubstr("bad_point.yaml:6"),
                           HasSubstr("did you mean \"filter\"?")));
}

TEST(Check, JsonOutput) {
  Outcome r =
      schedplug("check --json --config " + fixture("hw_case_mismatch.yaml") +
                " --plugins " + plugin_dir("hw.d"));
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["errors"], 1);
  EXPECT_EQ(j["warnings"], 1);
  ASSERT_EQ(j["diagnostics"].size(), 2u);
  EXPECT_EQ(j["diagnostics"][0]["severity"], "error");
  EXPECT_THAT(j["diagnostics"][0]["message"].get<std::string>(),
              HasSubstr("did you mean \"HwEncrypt\""));
  EXPECT_EQ(j["plugins"][0]["name"], "HwEncrypt");
}

TEST(Check, UnreadableInputsExitTwo) {
  Outcome missing_config = schedplug(
      "check --config /nonexistent.yaml --plugins " + plugin_dir("hw.d"));
  EXPECT_EQ(missing_config.exit_code, 2);
  EXPECT_THAT(missing_config.err,
              HasSubstr("/nonexistent.yaml: cannot read the scheduler "
                        "configuration"));
  Outcome missing_dir = schedplug("check --config " + fixture("good.yaml") +
                                  " --plugins /nonexistent.d");
  EXPECT_EQ(missing_dir.exit_code, 2);
  EXPECT_THAT(missing_dir.err, HasSubstr("not a readable directory"));
  Outcome usage = schedplug("check --config " + fixture("good.yaml"));
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("--plugins is required"));
  Outcome no_command = schedplug("");
  EXPECT_EQ(no_command.exit_code, 2);
}

TEST(Help, DescribesBothCommands) {
  Outcome r = schedplug("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("inspect"), HasSubstr("check"),
                           HasSubstr("Examples:")));
  Outcome c = schedplug("check --help");
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_THAT(c.out, AllOf(HasSubstr("--config"), HasSubstr("--plugins"),
                           HasSubstr("Exit status")));
}

TEST(Inspect, TextShowsTheDescriptor) {
  Outcome r = schedplug("inspect " + plugin_dir("good.d") + "/good_scorer.so");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("name:             GoodScorer"),
                    HasSubstr("version:          2.1.0"),
                    HasSubstr("ABI version:      1 (this host: 1)"),
                    HasSubstr("PreScore, Score, NormalizeScore"),
                    HasSubstr("per-pod hooks:    none"),
                    HasSubstr("reversed min-max"), HasSubstr("every 5000 ms"),
                    HasSubstr("events:           NodeAdd, PodDelete")));
}

// The ABI v1.6 hooks: inspect shows them as extension points, check lists
// them per profile and refuses unreserve() without reserve() or permit().
TEST(Inspect, ShowsTheHooksOfAPlugin) {
  Outcome r =
      schedplug("inspect --no-create " + plugin_dir("hooks.d") + "/HookA.so");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PreFilter, Filter, Reserve, Unreserve, "
                               "Permit, PreBind, PreEnqueue"));
}

TEST(Check, ListsTheHooksOfEachProfile) {
  const std::string config = ::testing::TempDir() + "/hooks-config.yaml";
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: hooks
    plugins:
      multiPoint:
        enabled:
          - name: HookB
          - name: HookA
  - schedulerName: plain
)";
  Outcome r = schedplug("check --no-create --config " + config + " --plugins " +
                        plugin_dir("hooks.d"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("profile \"hooks\" hooks: Reserve: HookB, HookA; "
                              "Permit: HookB, HookA; PreBind: HookB, HookA; "
                              "PreEnqueue: HookB, HookA;"),
                    Not(HasSubstr("profile \"plain\""))));
  r = schedplug("check --json --no-create --config " + config + " --plugins " +
                plugin_dir("hooks.d"));
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["hooks"].size(), 1u);
  EXPECT_EQ(j["hooks"][0]["profile"], "hooks");
  EXPECT_EQ(j["hooks"][0]["plugins"]["PreBind"],
            (std::vector<std::string>{"HookB", "HookA"}));
}

TEST(Check, UnreserveWithoutReserveOrPermitIsAnError) {
  const std::string config = ::testing::TempDir() + "/plain-config.yaml";
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: plain
)";
  Outcome r = schedplug("check --no-create --config " + config + " --plugins " +
                        plugin_dir("hooks-bad.d"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out + r.err,
              HasSubstr("plugin \"HookUnreserveOnly\" implements unreserve() "
                        "but neither reserve() nor permit()"));
}

#ifdef SCHEDPLUG_SAMPLE_HW_ENCRYPT
// What an instance declares is set by create() and may follow the args:
// inspect creates one with --args (default {}) and shows it.
TEST(Inspect, ShowsWhatAnInstanceDeclares) {
  const std::string so = SCHEDPLUG_SAMPLE_HW_ENCRYPT;
  Outcome r = schedplug("inspect " + so);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      r.out,
      AllOf(HasSubstr("per-pod hooks:    pod_begin, pod_end (per-pod state"),
            HasSubstr("create({}) declares:\n"),
            HasSubstr("  data:           none (the v1.1 pod and node views)"),
            HasSubstr("  hints:          FilterIgnoresNodePods, "
                      "FilterIgnoresPodIdentity, FilterReadsDeclaredPodKeys"),
            HasSubstr("  pod keys:       annotations "
                      "myorg.io/require-hw-encrypt")));

  Outcome other =
      schedplug("inspect " + so + " --args '{\"podAnnotation\": \"x.io/y\"}'");
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_THAT(other.out, HasSubstr("  pod keys:       annotations x.io/y"));

  Outcome refused = schedplug("inspect " + so + " --args '{\"bogus\": 1}'");
  EXPECT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_THAT(refused.out,
              AllOf(HasSubstr("failed, so what an instance declares is "
                              "unknown"),
                    HasSubstr("bogus"), HasSubstr("--no-create")));

  Outcome bare = schedplug("inspect --no-create " + so);
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_THAT(bare.out, Not(HasSubstr("declares")));

  Outcome j = schedplug("inspect --json " + so);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto inst = nlohmann::json::parse(j.out)["instance"];
  EXPECT_EQ(inst["args"], "{}");
  EXPECT_EQ(inst["hints_mask"], 7);
  EXPECT_EQ(inst["pod_annotation_keys"],
            nlohmann::json::parse(R"(["myorg.io/require-hw-encrypt"])"));
  EXPECT_EQ(inst["pod_label_keys"], nlohmann::json::array());
  EXPECT_EQ(inst["data"], nlohmann::json::array());
}
#endif

TEST(Inspect, Json) {
  Outcome r =
      schedplug("inspect --json " + plugin_dir("hw.d") + "/hw_encrypt.so");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "HwEncrypt");
  EXPECT_EQ(j["version"], "0.3.0");
  EXPECT_EQ(j["abi_version"], 1);
  EXPECT_EQ(j["extension_points"],
            nlohmann::json::parse(R"(["PreFilter", "Filter"])"));
  EXPECT_TRUE(j["refresh_period_ms"].is_null());
  EXPECT_EQ(j["events"], nlohmann::json::parse(R"(["NodeUpdateLabel"])"));
}

TEST(Inspect, BrokenFilesExitOneWithTheirReason) {
  Outcome not_elf =
      schedplug(std::string("inspect ") + SCHEDPLUG_CORPUS_DIR + "/not_elf.so");
  EXPECT_EQ(not_elf.exit_code, 1);
  EXPECT_THAT(not_elf.err, HasSubstr("not a shared object"));
  Outcome newer = schedplug(std::string("inspect ") + SCHEDPLUG_CORPUS_DIR +
                            "/abi_newer.so");
  EXPECT_EQ(newer.exit_code, 1);
  EXPECT_THAT(newer.err, HasSubstr("built for schedplug ABI version 2, this "
                                   "host speaks version 1"));
  Outcome missing = schedplug("inspect /nonexistent.so");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no such file"));
  Outcome json = schedplug(std::string("inspect --json ") +
                           SCHEDPLUG_CORPUS_DIR + "/no_entry.so");
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_THAT(nlohmann::json::parse(json.out)["error"].get<std::string>(),
              HasSubstr("exports no `schedplug_plugin_v1`"));
}

// Plugins are loaded in a child process: a constructor that calls abort()
// is reported, with exit status 1, and the CLI itself does not crash.
TEST(Check, AConstructorThatAbortsIsReportedNotACrash) {
  Outcome r = schedplug("check --config " + fixture("good.yaml") +
                        " --plugins " + plugin_dir("abort.d"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("killed by signal 6"),
                           HasSubstr("abort.d/ctor_abort.so"),
                           HasSubstr("fix or remove it")));
}

TEST(Inspect, AConstructorThatAbortsIsReportedNotACrash) {
  Outcome r = schedplug("inspect " + plugin_dir("abort.d") + "/ctor_abort.so");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("killed by signal 6"),
                           HasSubstr("ctor_abort.so")));
}

TEST(Inspect, PrintsTheSha256ThatSha256sumPrints) {
  const std::string file = plugin_dir("hw.d") + "/hw_encrypt.so";
  const std::string sums =
      ::testing::TempDir() + "/schedplug-cli-sum-" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("sha256sum '" + file + "' > '" + sums + "'").c_str()),
            0);
  std::istringstream line(slurp(sums));
  std::string digest;
  line >> digest;
  ASSERT_EQ(digest.size(), 64u);
  Outcome r = schedplug("inspect " + file);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sha256:           " + digest));
  Outcome j = schedplug("inspect --json " + file);
  EXPECT_EQ(nlohmann::json::parse(j.out)["sha256"], digest);
}

// `schedplug check` of a profile "args-scheduler" enabling HwEncrypt at
// filter, whose args.schedplug is this one-line YAML mapping.
Outcome check_with_schedplug_args(const std::string& schedplug_args) {
  const std::string config = ::testing::TempDir() + "/schedplug-cli-args-" +
                             std::to_string(::getpid()) + ".yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "profiles:\n"
                           "- schedulerName: args-scheduler\n"
                           "  plugins:\n"
                           "    filter:\n"
                           "      enabled:\n"
                           "      - name: HwEncrypt\n"
                           "  pluginConfig:\n"
                           "  - name: HwEncrypt\n"
                           "    args:\n"
                           "      schedplug: "
                        << schedplug_args << "\n";
  return schedplug("check --config " + config + " --plugins " +
                   plugin_dir("hw.d"));
}

// A recursive anchor in the args used to crash the configuration reader,
// and `check`, which loads plugins in a child, blamed the plugin for the
// crash. It is a configuration error with its line, like the host's.
TEST(Check, ARecursiveAnchorIsAConfigErrorNotACrash) {
  Outcome r = check_with_schedplug_args("&a {loop: *a}");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out + r.err,
              AllOf(HasSubstr(".yaml:12: this value (an anchor, &name) "
                              "contains an alias (*name) to itself"),
                    Not(HasSubstr("signal")), Not(HasSubstr("crash"))));
}

// args.schedplug.sha256 pins a plugin; `check` applies it before opening
// any file, as schedplug-host does, and reports the same mismatch.
TEST(Check, ConfigSha256PinIsCheckedBeforeLoading) {
  const std::string file = plugin_dir("hw.d") + "/hw_encrypt.so";
  const std::string base =
      ::testing::TempDir() + "/schedplug-cli-pin-" + std::to_string(::getpid());
  ASSERT_EQ(
      std::system(("sha256sum '" + file + "' > '" + base + ".sum'").c_str()),
      0);
  std::istringstream line(slurp(base + ".sum"));
  std::string digest;
  line >> digest;
  ASSERT_EQ(digest.size(), 64u);
  auto check_pinning = [](const std::string& pin) {
    return check_with_schedplug_args("{sha256: \"" + pin + "\"}");
  };
  const std::string wrong(64, 'a');
  Outcome r = check_pinning(wrong);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("hw_encrypt.so"),
                           HasSubstr("refused before loading: its SHA-256 is " +
                                     digest),
                           HasSubstr("matches none of the args.schedplug."
                                     "sha256 pins"),
                           HasSubstr("(pinned: HwEncrypt)")));

  Outcome ok = check_pinning(digest);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;

  Outcome bad = check_pinning("xyz");
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("args.schedplug.sha256 is \"xyz\"; write"));
}

TEST(Check, ShadowCandidatesAreLoadedAndCreatedAsTheHostDoes) {
  auto with_shadow = [](const std::string& shadow) {
    return check_with_schedplug_args("{shadow: \"" + shadow + "\"}");
  };
  // The plugin's own file as its candidate: loads, same name, creates.
  const Outcome ok = with_shadow("hw_encrypt.so");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const Outcome missing = with_shadow("candidates/hw_encrypt.so");
  EXPECT_EQ(missing.exit_code, 1) << missing.out << missing.err;
  EXPECT_THAT(missing.out,
              AllOf(HasSubstr("profile \"args-scheduler\", plugin HwEncrypt: "
                              "args.schedplug.shadow candidates/hw_encrypt.so"),
                    HasSubstr("no such file")));
  const Outcome empty = with_shadow("");
  EXPECT_EQ(empty.exit_code, 1) << empty.out << empty.err;
  EXPECT_THAT(empty.out, HasSubstr("args.schedplug.shadow is \"\"; write the "
                                   "candidate plugin file"));
  // The same file, named from outside the plugin directory: refused before
  // it is opened, as the host refuses it.
  const std::string absolute = plugin_dir("hw.d") + "/hw_encrypt.so";
  const Outcome outside = with_shadow(absolute);
  EXPECT_EQ(outside.exit_code, 1) << outside.out << outside.err;
  EXPECT_THAT(outside.out,
              HasSubstr("args.schedplug.shadow is \"" + absolute +
                        "\", an absolute path; a shadow candidate is loaded "
                        "only from the plugin directory: copy the file into "
                        "it"));
  const Outcome climbing = with_shadow("../hw.d/hw_encrypt.so");
  EXPECT_EQ(climbing.exit_code, 1) << climbing.out << climbing.err;
  EXPECT_THAT(climbing.out,
              HasSubstr("args.schedplug.shadow is \"../hw.d/hw_encrypt.so\", "
                        "a path that climbs out with \"..\"; a shadow "
                        "candidate is loaded only from the plugin directory"));
}

#ifdef SCHEDPLUG_SHADOW_DOC
// docs/shadow.md's pluginConfig, as the guide writes it, passes `schedplug
// check` with the sample HwEncrypt live and its candidate where the guide
// puts it (candidates/ under the plugin directory); without that file,
// check names it.
TEST(Check, TheShadowGuidesConfigChecks) {
  const std::string doc = slurp(SCHEDPLUG_SHADOW_DOC);
  const auto open = doc.find("```yaml\n");
  ASSERT_NE(open, std::string::npos) << "docs/shadow.md has no yaml block";
  const auto begin = open + 8;
  const std::string block = doc.substr(begin, doc.find("```", begin) - begin);
  ASSERT_THAT(block, HasSubstr("shadow: candidates/hw_encrypt.so"));

  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(::testing::TempDir()) /
      ("schedplug-cli-shadow-guide-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "plugins" / "candidates");
  fs::copy_file(SCHEDPLUG_SAMPLE_HW_ENCRYPT, dir / "plugins" / "hw_encrypt.so");
  fs::copy_file(SCHEDPLUG_SAMPLE_HW_ENCRYPT,
                dir / "plugins" / "candidates" / "hw_encrypt.so");
  std::ostringstream config;
  config << "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            "profiles:\n"
            "- schedulerName: default-scheduler\n"
            "  plugins:\n"
            "    filter:\n"
            "      enabled:\n"
            "      - name: HwEncrypt\n";
  std::istringstream lines(block);
  for (std::string line; std::getline(lines, line);) {
    config << "  " << line << "\n";
  }
  std::ofstream(dir / "config.yaml") << config.str();
  const std::string args = "check --config '" + (dir / "config.yaml").string() +
                           "' --plugins '" + (dir / "plugins").string() + "'";
  const Outcome ok = schedplug(args);
  EXPECT_EQ(ok.exit_code, 0) << config.str() << ok.out << ok.err;

  fs::remove(dir / "plugins" / "candidates" / "hw_encrypt.so");
  const Outcome missing = schedplug(args);
  EXPECT_EQ(missing.exit_code, 1) << missing.out << missing.err;
  EXPECT_THAT(missing.out,
              HasSubstr("args.schedplug.shadow candidates/hw_encrypt.so"));
  fs::remove_all(dir);
}
#endif

// simulatorAnnotations is the shim's, and check accepts only a boolean
// (docs/simulator-annotations.md).
TEST(Check, SimulatorAnnotationsMustBeABoolean) {
  const Outcome on = check_with_schedplug_args("{simulatorAnnotations: true}");
  EXPECT_EQ(on.exit_code, 0) << on.out << on.err;
  const Outcome bad =
      check_with_schedplug_args("{simulatorAnnotations: \"yes\"}");
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("pluginConfig \"HwEncrypt\": "
                                 "args.schedplug.simulatorAnnotations is "
                                 "\"yes\"; write true"));
}

}  // namespace

// --- schedplug bundle ------------------------------------------------------

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/schedplug-bundle-" + name +
                          "-" + std::to_string(::getpid());
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  return dir;
}

bool exists(const std::string& path) {
  return std::system(("test -e '" + path + "'").c_str()) == 0;
}

TEST(Bundle, WritesStrippedCopiesAManifestAndPinsSha256sumAccepts) {
  const std::string out = fresh_dir("good");
  Outcome r = schedplug("bundle " + plugin_dir("good.d") + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("warning")));
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("bundled 4 plugin(s)"), HasSubstr("(stripped)"),
                    HasSubstr("GoodScorer"), HasSubstr("As a ConfigMap"),
                    HasSubstr("kubectl create configmap schedplug-plugins -n "
                              "kube-system --from-file=" +
                              out + "/"),
                    HasSubstr("SCHEDPLUG_PLUGIN_DIR=" + out +
                              " deploy/build-images.sh")));
  // The pins are sha256sum's own format, for --plugin-sha256.
  EXPECT_EQ(
      std::system(
          ("cd '" + out + "' && sha256sum --quiet -c SHA256SUMS").c_str()),
      0);
  const auto manifest = nlohmann::json::parse(slurp(out + "/manifest.json"));
  EXPECT_EQ(manifest["schemaVersion"], 1);
  ASSERT_EQ(manifest["plugins"].size(), 4u);
  std::vector<std::string> names;
  for (const auto& p : manifest["plugins"]) {
    names.push_back(p["name"]);
    const std::string file = out + "/" + p["file"].get<std::string>();
    // What inspect reports of the shipped file is what the manifest says.
    Outcome info = schedplug("inspect --json " + file);
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto j = nlohmann::json::parse(info.out);
    EXPECT_EQ(p["sha256"], j["sha256"]);
    EXPECT_EQ(p["version"], j["version"]);
    EXPECT_EQ(p["abiVersion"], j["abi_version"]);
    EXPECT_GT(p["size"].get<int64_t>(), 0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"GoodFilter", "GoodScorer",
                                             "HwEncrypt", "StrictArgs"}));
  // Bundling a bundle again gives the same files: strip is idempotent.
  const std::string again = fresh_dir("again");
  ASSERT_EQ(schedplug("bundle " + out + " -o " + again).exit_code, 0);
  EXPECT_EQ(slurp(again + "/SHA256SUMS"), slurp(out + "/SHA256SUMS"));
}

TEST(Bundle, NoStripWarnsAboutDebugSections) {
  const std::string out = fresh_dir("nostrip");
  Outcome r =
      schedplug("bundle --no-strip " + plugin_dir("hw.d") + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("warning: hw_encrypt.so is not stripped"),
                           HasSubstr(".symtab"), HasSubstr("drop --no-strip")));
  EXPECT_THAT(r.out, Not(HasSubstr("(stripped)")));
}

TEST(Bundle, JsonCarriesTheManifestAndTheConfigMapSize) {
  const std::string out = fresh_dir("json");
  Outcome r = schedplug("bundle --json " + plugin_dir("hw.d") + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["manifest"],
            nlohmann::json::parse(slurp(out + "/manifest.json")));
  EXPECT_TRUE(j["fitsConfigMap"]);
  EXPECT_GT(j["configMapBytes"].get<int64_t>(),
            j["manifest"]["plugins"][0]["size"].get<int64_t>());
}

TEST(Bundle, APluginThatCannotShipLeavesNothingBehind) {
  // Two files that report one name: the host would use neither.
  const std::string dup = fresh_dir("dup-src");
  const std::string hw = plugin_dir("hw.d") + "/hw_encrypt.so";
  ASSERT_EQ(std::system(("mkdir -p '" + dup + "' && cp '" + hw + "' '" + dup +
                         "/a.so' && cp '" + hw + "' '" + dup + "/b.so'")
                            .c_str()),
            0);
  const std::string out = fresh_dir("dup");
  Outcome r = schedplug("bundle " + dup + " -o " + out);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(
      r.err, AllOf(HasSubstr("a.so"), HasSubstr("b.so"), HasSubstr("HwEncrypt"),
                   HasSubstr("nothing was written")));
  EXPECT_FALSE(exists(out));

  // A constructor that aborts kills the child that loads; OUT, empty
  // before, is empty again.
  const std::string empty = fresh_dir("abort");
  ASSERT_EQ(std::system(("mkdir -p '" + empty + "'").c_str()), 0);
  Outcome a = schedplug("bundle " + plugin_dir("abort.d") + " -o " + empty);
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_THAT(a.err, AllOf(HasSubstr("killed by signal 6"),
                           HasSubstr("ctor_abort.so")));
  EXPECT_TRUE(exists(empty));
  EXPECT_FALSE(exists(empty + "/ctor_abort.so"));
}

TEST(Bundle, BadArgumentsExitTwoAndTouchNothing) {
  const std::string full = fresh_dir("full");
  ASSERT_EQ(std::system(("mkdir -p '" + full + "' && echo keep > '" + full +
                         "/notes.txt'")
                            .c_str()),
            0);
  Outcome not_empty = schedplug("bundle " + plugin_dir("hw.d") + " -o " + full);
  EXPECT_EQ(not_empty.exit_code, 2);
  EXPECT_THAT(not_empty.err, AllOf(HasSubstr(full + " is not empty"),
                                   HasSubstr("new or empty one")));
  EXPECT_EQ(slurp(full + "/notes.txt"), "keep\n");

  const std::string none = fresh_dir("none-src");
  ASSERT_EQ(std::system(("mkdir -p '" + none + "'").c_str()), 0);
  Outcome no_plugins = schedplug("bundle " + none + " -o " + fresh_dir("x"));
  EXPECT_EQ(no_plugins.exit_code, 2);
  EXPECT_THAT(no_plugins.err, HasSubstr("no .so files in " + none));

  Outcome missing = schedplug("bundle /nonexistent -o " + fresh_dir("y"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err,
              HasSubstr("/nonexistent is not a readable directory"));
}
