// PluginInstance: create() with args, hooks on pod and node views,
// exceptions through the C ABI, normalization policies and range checks.
#include "host/plugin/plugin_instance.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "corpus_path.hpp"
#include "host/model/models.hpp"

namespace schedplug::host {
namespace {

using ::testing::AllOf;
using testing::corpus_file;
using ::testing::HasSubstr;

std::unique_ptr<PluginInstance> make(const std::string& stem,
                                     const std::string& args = "{}") {
  return PluginInstance::create(load_plugin_file(corpus_file(stem)), args);
}

std::unique_ptr<NodeModel> node(const std::string& name, KeyValues labels,
                                uint32_t pods = 0) {
  NodeData d;
  d.name = name;
  d.labels = std::move(labels);
  d.pod_count = pods;
  return std::make_unique<NodeModel>(std::move(d));
}

std::unique_ptr<PodModel> pod(KeyValues labels = {}) {
  PodData d;
  d.namespace_name = "default";
  d.name = "p";
  d.labels = std::move(labels);
  return std::make_unique<PodModel>(std::move(d));
}

std::vector<schedplug_node_score> scores_of(
    const std::vector<std::pair<const char*, int64_t>>& raw) {
  std::vector<schedplug_node_score> out;
  for (const auto& [name, value] : raw) {
    out.push_back({schedplug_str_of(name), value});
  }
  return out;
}

std::vector<int64_t> values(const std::vector<schedplug_node_score>& s) {
  std::vector<int64_t> out;
  for (const auto& e : s) out.push_back(e.score);
  return out;
}

TEST(PluginInstance, FilterOnPodAndNodeViews) {
  auto hw = make("hw_encrypt");
  auto p = pod();
  auto yes = node("n1", {{"hw.example.com/encrypt", "true"}});
  auto no = node("n2", {});
  EXPECT_TRUE(hw->filter(p->view(), yes->view()).ok());
  Verdict v = hw->filter(p->view(), no->view());
  EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_EQ(v.reason, "node(s) lack hardware encryption");
  EXPECT_EQ(hw->name(), "HwEncrypt");
}

TEST(PluginInstance, AppliesAndStatefulCreateDestroy) {
  auto f = make("good_filter");  // mallocs in create, frees in destroy
  EXPECT_TRUE(f->applies(pod()->view()));
  EXPECT_FALSE(f->applies(pod({{"corpus/ignore-me", ""}})->view()));
  auto rejected =
      f->filter(pod()->view(), node("n", {{"corpus/reject", ""}})->view());
  EXPECT_EQ(rejected.code, SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(rejected.reason, "node(s) carry corpus/reject");
}

TEST(PluginInstance, PluginWithoutFilterPassesAndWithoutScoreErrors) {
  auto scorer = make("good_scorer");
  EXPECT_TRUE(scorer->filter(pod()->view(), node("n", {})->view()).ok());
  auto hw = make("hw_encrypt");
  ScoreResult r = hw->score(pod()->view(), node("n", {})->view());
  EXPECT_EQ(r.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(r.reason, HasSubstr("has no score() hook"));
}

TEST(PluginInstance, CreateFailureCarriesThePluginsMessage) {
  try {
    make("strict_args", R"({"other":1})");
    FAIL() << "create() should have failed";
  } catch (const CreateError& e) {
    EXPECT_THAT(
        e.what(),
        AllOf(HasSubstr("StrictArgs ("), HasSubstr("strict_args.so)"),
              HasSubstr("rejected its args: args.threshold is required"),
              HasSubstr(R"({"other":1})")));
  }
  EXPECT_NO_THROW(make("strict_args", R"({"threshold":5})"));
}

TEST(PluginInstance, CreateThrowingThroughTheAbiIsACreateError) {
  try {
    make("create_throws");
    FAIL() << "create() should have failed";
  } catch (const CreateError& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("CreateThrows"),
                      HasSubstr("plugin CreateThrows threw through the C ABI: "
                                "config file /etc/missing.conf not found")));
  }
}

TEST(PluginInstance, HookThrowingThroughTheAbiIsAnError) {
  auto t = make("hook_throws");
  Verdict v = t->filter(pod()->view(), node("n", {})->view());
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(v.reason,
              HasSubstr("plugin HookThrows threw through the C ABI: boom in "
                        "filter"));
  ScoreResult s = t->score(pod()->view(), node("n", {})->view());
  EXPECT_EQ(s.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(s.reason, HasSubstr("threw through the C ABI: an exception that "
                                  "is not a std::exception"));
}

// Reasons end up in proto3 strings, which must be valid UTF-8: whatever
// bytes a plugin writes, the host's copy is valid, losing only a
// character cut at the end and replacing stray bytes with U+FFFD.
TEST(PluginInstance, ReasonsAreValidUtf8WhateverThePluginWrites) {
  auto bad = make("bad_utf8");
  auto p = pod();
  auto plain = node("n1", {});
  auto junk = node("junk", {});
  std::string cut = "xy";
  for (int i = 0; i < 126; ++i) cut += "\u00e9";

  Verdict v = bad->filter(p->view(), plain->view());
  EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(v.reason, cut);
  v = bad->filter(p->view(), junk->view());
  EXPECT_EQ(v.reason, "bad \ufffd byte, then a cut ");

  // The batched path (PreFilter's chunks) reads the plugin's buffer in
  // place; it must give the same text.
  FilterCall call;
  EXPECT_EQ(bad->filter_into(p->view(), plain->view(), call),
            SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(call.reason(), cut);
  EXPECT_EQ(bad->filter_into(p->view(), junk->view(), call),
            SCHEDPLUG_UNSCHEDULABLE);
  EXPECT_EQ(call.reason(), "bad \ufffd byte, then a cut ");

  ScoreResult s = bad->score(p->view(), junk->view());
  EXPECT_EQ(s.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(s.reason, HasSubstr("bad \ufffd byte, then a cut "));
  EXPECT_TRUE(runtime::is_valid_utf8(s.reason)) << s.reason;
}

TEST(Utf8, ValidTextIsKeptAndInvalidBytesAreReplacedOrCut) {
  using runtime::is_valid_utf8;
  using runtime::valid_utf8;
  for (const char* ok : {"", "plain", "\u00e9\u4e2d\U0001F600", "\U0010FFFF"}) {
    EXPECT_TRUE(is_valid_utf8(ok)) << ok;
    EXPECT_EQ(valid_utf8(ok), ok);
  }
  // Overlong forms, surrogates, beyond U+10FFFF, stray continuations.
  for (const char* bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80",
                          "\xF4\x90\x80\x80", "\x80", "\xFF"}) {
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
    EXPECT_TRUE(is_valid_utf8(valid_utf8(std::string(bad) + "!")));
  }
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a\ufffd"
            "b");
  // A character cut at the end is dropped, whatever its length.
  EXPECT_EQ(valid_utf8("ab\xC3"), "ab");
  EXPECT_EQ(valid_utf8("ab\xE4\xB8"), "ab");
  EXPECT_EQ(valid_utf8("ab\xF0\x9F\x98"), "ab");
  // ...but not a lead byte followed by something that does not continue it.
  EXPECT_EQ(valid_utf8("\xC3"
                       "a"),
            "\ufffd"
            "a");
}

TEST(PluginInstance, HooksAreSafeToCallConcurrently) {
  // plugin.h: filter and score run concurrently on one instance; each call
  // gets its own reason buffer. Run under TSan to check the host side.
  auto f = make("good_filter");
  auto p = pod();
  auto ok = node("ok", {});
  auto bad = node("bad", {{"corpus/reject", ""}});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        Verdict a = f->filter(p->view(), ok->view());
        Verdict b = f->filter(p->view(), bad->view());
        if (!a.ok() || !a.reason.empty() ||
            b.reason != "node(s) carry corpus/reject") {
          ++wrong;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(PluginInstance, ScoreReturnsRawValue) {
  auto scorer = make("good_scorer");
  ScoreResult r = scorer->score(pod()->view(), node("n", {}, 42)->view());
  EXPECT_EQ(r.code, SCHEDPLUG_SUCCESS);
  EXPECT_EQ(r.score, 42);
}

TEST(Normalize, ReversePolicyLowestBecomes100) {
  auto scorer = make("good_scorer");
  auto s = scores_of({{"a", 10}, {"b", 20}, {"c", 30}, {"d", 15}});
  ASSERT_TRUE(scorer->normalize(pod()->view(), s).ok());
  EXPECT_EQ(values(s), (std::vector<int64_t>{100, 50, 0, 75}));
}

TEST(Normalize, LinearPolicyHighestBecomes100AndHandlesHugeRange) {
  auto t = make("hook_throws");  // declares LINEAR
  auto s = scores_of({{"a", INT64_MIN}, {"b", 0}, {"c", INT64_MAX}});
  ASSERT_TRUE(t->normalize(pod()->view(), s).ok());
  EXPECT_EQ(values(s), (std::vector<int64_t>{0, 50, 100}));
}

TEST(Normalize, AllEqualRawScoresAllGet100) {
  auto scorer = make("good_scorer");
  auto s = scores_of({{"a", 7}, {"b", 7}});
  ASSERT_TRUE(scorer->normalize(pod()->view(), s).ok());
  EXPECT_EQ(values(s), (std::vector<int64_t>{100, 100}));
}

TEST(Normalize, EmptyIsFine) {
  auto scorer = make("good_scorer");
  std::vector<schedplug_node_score> none;
  EXPECT_TRUE(scorer->normalize(pod()->view(), none).ok());
}

TEST(Normalize, OwnNormalizeScoreIsUsedAndRangeChecked) {
  auto own = make("own_normalize");
  auto s = scores_of({{"a", 300}, {"b", 1000}});
  ASSERT_TRUE(own->normalize(pod()->view(), s).ok());
  EXPECT_EQ(values(s), (std::vector<int64_t>{30, 100}));

  auto broken = make("own_normalize", R"({"broken":true})");
  auto bad = scores_of({{"a", 30}, {"node-7", 1000}});
  Verdict v = broken->normalize(pod()->view(), bad);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(v.reason,
              AllOf(HasSubstr("plugin OwnNormalize gave node \"node-7\" the "
                              "score 1000 after its normalize_score()"),
                    HasSubstr("[0, 100]")));
  EXPECT_EQ(bad[1].score, 1000);  // never clamped
}

TEST(Normalize, PolicyNoneRangeChecksOnly) {
  auto strict = make("strict_args", R"({"threshold":1})");  // policy NONE
  auto ok = scores_of({{"a", 0}, {"b", 100}});
  EXPECT_TRUE(strict->normalize(pod()->view(), ok).ok());
  EXPECT_EQ(values(ok), (std::vector<int64_t>{0, 100}));
  auto bad = scores_of({{"a", -1}});
  Verdict v = strict->normalize(pod()->view(), bad);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_THAT(v.reason, HasSubstr("node \"a\" the score -1 with normalize "
                                  "policy NONE"));
}

TEST(PluginInstance, RefreshRuns) {
  auto scorer = make("good_scorer");
  EXPECT_TRUE(scorer->refresh().ok());
  auto hw = make("hw_encrypt");
  EXPECT_TRUE(hw->refresh().ok());  // no refresh hook
}

}  // namespace
}  // namespace schedplug::host
