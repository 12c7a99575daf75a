// The host's normalization policies (runtime::apply_policy, then the
// range check PluginInstance::normalize applies) on the test vectors the
// shim's normalize package checks too (proto/testdata/normalize_vectors.json):
// the shim normalizes raw scores the host computed ahead, and must give
// exactly the host's scores and errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schedplug/runtime.hpp"

namespace schedplug::host {
namespace {

uint32_t policy_named(const std::string& name) {
  if (name == "NONE") return SCHEDPLUG_NORMALIZE_NONE;
  if (name == "LINEAR") return SCHEDPLUG_NORMALIZE_LINEAR;
  if (name == "REVERSE") return SCHEDPLUG_NORMALIZE_REVERSE;
  ADD_FAILURE() << "unknown policy " << name;
  return SCHEDPLUG_NORMALIZE_NONE;
}

TEST(NormalizeVectors, HostGivesEveryVectorsAnswer) {
  std::ifstream in(SCHEDPLUG_NORMALIZE_VECTORS);
  ASSERT_TRUE(in) << "cannot read " << SCHEDPLUG_NORMALIZE_VECTORS;
  const auto doc = nlohmann::json::parse(in);
  const auto& vectors = doc.at("vectors");
  ASSERT_GE(vectors.size(), 10u);
  for (const auto& v : vectors) {
    const std::string name = v.at("name");
    const auto raw = v.at("raw").get<std::vector<int64_t>>();
    std::vector<std::string> nodes;
    for (size_t i = 0; i < raw.size(); ++i)
      nodes.push_back("n" + std::to_string(i));
    std::vector<schedplug_node_score> scores;
    for (size_t i = 0; i < raw.size(); ++i)
      scores.push_back({schedplug_str_of(nodes[i].c_str()), raw[i]});
    runtime::apply_policy(policy_named(v.at("policy")), scores);
    const std::string error =
        runtime::out_of_range("P", /*custom_normalize=*/false, scores);
    if (v.contains("error")) {
      EXPECT_EQ(error, v.at("error").get<std::string>()) << name;
      continue;
    }
    EXPECT_EQ(error, "") << name;
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, v.at("want").get<std::vector<int64_t>>()) << name;
  }
}

}  // namespace
}  // namespace schedplug::host
