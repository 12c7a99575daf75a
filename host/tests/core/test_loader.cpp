// The loader against the corpus: every broken file is rejected with its
// own message, and the good plugins beside them still load.
#include "host/loader/plugin_library.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "corpus_path.hpp"

namespace schedplug::host {
namespace {

using ::testing::AllOf;
using testing::corpus_dir;
using testing::corpus_file;
using ::testing::HasSubstr;

std::string load_error_of(const std::string& stem) {
  try {
    load_plugin_file(corpus_file(stem));
  } catch (const LoadError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

TEST(LoadPluginFile, GoodPluginExposesItsDescriptor) {
  auto lib = load_plugin_file(corpus_file("good_scorer"));
  EXPECT_EQ(lib->name(), "GoodScorer");
  EXPECT_EQ(lib->version(), "2.1.0");
  EXPECT_EQ(lib->abi_version(), SCHEDPLUG_ABI_VERSION);
  EXPECT_EQ(lib->file(), corpus_file("good_scorer"));
  EXPECT_FALSE(lib->has_filter());
  EXPECT_TRUE(lib->has_score());
  EXPECT_TRUE(lib->has_refresh());
  EXPECT_EQ(lib->descriptor().normalize_policy, SCHEDPLUG_NORMALIZE_REVERSE);
  EXPECT_EQ(lib->descriptor().refresh_period_ms, 5000u);
}

TEST(LoadPluginFile, LargerDescriptorFromANewerV1HeaderLoads) {
  auto lib = load_plugin_file(corpus_file("bigger_descriptor"));
  EXPECT_EQ(lib->name(), "BiggerDescriptor");
  // The host's copy has the host's size; the fields it knows are intact.
  EXPECT_GT(lib->descriptor().struct_size, sizeof(schedplug_plugin));
  EXPECT_TRUE(lib->has_filter());
  EXPECT_EQ(lib->descriptor().events, SCHEDPLUG_EVENT_POD_ADD);
}

TEST(LoadPluginFile, NotASharedObjectSaysSoWithDlerror) {
  EXPECT_THAT(
      load_error_of("not_elf"),
      AllOf(HasSubstr("not_elf.so: not a shared object"),
            HasSubstr("dlopen says:"), HasSubstr("invalid ELF header")));
}

// A plugin file cut short (still being copied, or written to a full disk):
// dlopen would map its segments past the end of the file, and the first
// touch of those pages kills the process with SIGBUS. The loader refuses
// it, at any cut, and loads the whole file.
TEST(LoadPluginFile, AnIncompleteFileIsRefusedAtAnyCut) {
  std::ifstream in(corpus_file("good_filter"), std::ios::binary);
  const std::string whole{std::istreambuf_iterator<char>(in),
                          std::istreambuf_iterator<char>()};
  ASSERT_GT(whole.size(), 4096u);
  char tmpl[] = "/tmp/schedplug-loader-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  const auto file = dir / "good_filter.so";
  for (size_t cut : {size_t{20}, size_t{100}, whole.size() / 4,
                     whole.size() / 2, whole.size() - 100, whole.size() - 1}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        << whole.substr(0, cut);
    try {
      load_plugin_file(file);
      ADD_FAILURE() << "a file cut at byte " << cut << " of " << whole.size()
                    << " loaded";
    } catch (const LoadError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("good_filter.so: the file is "
                                            "incomplete: it holds " +
                                            std::to_string(cut) + " bytes"),
                                  HasSubstr("still being copied")))
          << "cut at " << cut;
    }
  }
  std::ofstream(file, std::ios::binary | std::ios::trunc) << whole;
  EXPECT_EQ(load_plugin_file(file)->name(), "GoodFilter");
  std::filesystem::remove_all(dir);
}

TEST(LoadPluginFile, MissingFile) {
  EXPECT_THAT(load_error_of("does_not_exist"), HasSubstr("no such file"));
}

TEST(LoadPluginFile, NoEntrySymbolNamesItAndTheExportMacro) {
  EXPECT_THAT(load_error_of("no_entry"),
              AllOf(HasSubstr("no_entry.so: exports no `schedplug_plugin_v1`"),
                    HasSubstr("SCHEDPLUG_EXPORT"), HasSubstr("extern \"C\"")));
}

TEST(LoadPluginFile, NewerAbiNamesBothVersions) {
  EXPECT_THAT(load_error_of("abi_newer"),
              HasSubstr("abi_newer.so: built for schedplug ABI version 2, "
                        "this host speaks version 1; rebuild the plugin "
                        "against this host's SDK"));
}

TEST(LoadPluginFile, OlderAbiNamesBothVersions) {
  EXPECT_THAT(load_error_of("abi_older"),
              HasSubstr("built for schedplug ABI version 0, this host speaks "
                        "version 1"));
}

TEST(LoadPluginFile, SmallDescriptorNamesBothSizes) {
  const auto v1 = offsetof(schedplug_plugin, events) + sizeof(uint64_t);
  const auto small = offsetof(schedplug_plugin, events);
  EXPECT_THAT(load_error_of("small_descriptor"),
              HasSubstr("the descriptor is " + std::to_string(small) +
                        " bytes, smaller than the " + std::to_string(v1) +
                        " bytes of ABI version 1"));
}

TEST(LoadPluginFile, EmptyName) {
  EXPECT_THAT(load_error_of("empty_name"),
              HasSubstr("empty_name.so: the plugin reports an empty name"));
}

TEST(LoadPluginFile, NameNotUpperCamelCaseSuggestsOne) {
  EXPECT_THAT(load_error_of("snake_name"),
              AllOf(HasSubstr("\"network_latency\" is not UpperCamelCase"),
                    HasSubstr("\"NetworkLatency\"")));
}

TEST(LoadPluginFile, NormalizeScoreWithoutScore) {
  EXPECT_THAT(load_error_of("normalize_only"),
              HasSubstr("implements NormalizeScore but not Score"));
}

TEST(LoadPluginFile, RefreshWithoutPeriod) {
  EXPECT_THAT(load_error_of("refresh_no_period"),
              HasSubstr("refresh_period_ms is 0"));
}

TEST(IsUpperCamelCase, Rules) {
  EXPECT_TRUE(is_upper_camel_case("HwEncrypt"));
  EXPECT_TRUE(is_upper_camel_case("NodeResourcesFit"));
  EXPECT_TRUE(is_upper_camel_case("A1"));
  EXPECT_FALSE(is_upper_camel_case(""));
  EXPECT_FALSE(is_upper_camel_case("hwEncrypt"));
  EXPECT_FALSE(is_upper_camel_case("Hw_Encrypt"));
  EXPECT_FALSE(is_upper_camel_case("Hw-Encrypt"));
  EXPECT_FALSE(is_upper_camel_case("1Plugin"));
}

class CorpusDirectory : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    result_ = new LoadResult(load_plugin_directory(corpus_dir()));
  }
  static void TearDownTestSuite() {
    delete result_;
    result_ = nullptr;
  }
  static std::vector<std::string> loaded_names() {
    std::vector<std::string> names;
    for (const auto& p : result_->plugins) names.push_back(p->name());
    return names;
  }
  static std::string problem_for(const std::string& stem) {
    for (const auto& p : result_->problems) {
      if (p.file.filename() == stem + ".so") return p.message;
    }
    return "(no problem reported)";
  }
  static LoadResult* result_;
};
LoadResult* CorpusDirectory::result_ = nullptr;

TEST_F(CorpusDirectory, GoodPluginsLoadBesideTheBrokenOnes) {
  // create_throws, strict_args and hook_throws have valid descriptors:
  // their faults show only when created or called.
  EXPECT_THAT(loaded_names(), ::testing::ElementsAre(
                                  "BadUtf8", "BiggerDescriptor", "CreateThrows",
                                  "GoodFilter", "GoodScorer", "HookThrows",
                                  "HwEncrypt", "OwnNormalize", "StrictArgs"));
}

TEST_F(CorpusDirectory, EveryBrokenFileHasItsOwnProblem) {
  EXPECT_THAT(problem_for("not_elf"), HasSubstr("not a shared object"));
  EXPECT_THAT(problem_for("no_entry"), HasSubstr("exports no"));
  EXPECT_THAT(problem_for("abi_newer"), HasSubstr("ABI version 2"));
  EXPECT_THAT(problem_for("abi_older"), HasSubstr("ABI version 0"));
  EXPECT_THAT(problem_for("small_descriptor"), HasSubstr("smaller than"));
  EXPECT_THAT(problem_for("empty_name"), HasSubstr("empty name"));
  EXPECT_THAT(problem_for("snake_name"), HasSubstr("not UpperCamelCase"));
  EXPECT_THAT(problem_for("normalize_only"),
              HasSubstr("NormalizeScore but not Score"));
  EXPECT_THAT(problem_for("refresh_no_period"), HasSubstr("refresh_period_ms"));
  EXPECT_EQ(result_->problems.size(), 10u);
}

TEST_F(CorpusDirectory, DuplicateNameNamesBothFilesAndUsesNeither) {
  EXPECT_THAT(problem_for("twin_a"),
              AllOf(HasSubstr("twin_a.so: plugin name \"Twin\" is also "
                              "reported by "),
                    HasSubstr("twin_b.so; names must be unique"),
                    HasSubstr("none of these files is used")));
  const auto names = loaded_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "Twin"), 0);
}

TEST(LoadPluginDirectory, MissingDirectoryIsALoadError) {
  EXPECT_THROW(load_plugin_directory(corpus_dir() / "nope"), LoadError);
}

}  // namespace
}  // namespace schedplug::host
