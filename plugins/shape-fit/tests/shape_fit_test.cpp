// ShapeFit, loaded from its built .so with the SDK's test kit (the host's
// rules): the scores of tests/data/cases.json, which the Go twin's test
// checks too, the descriptor and the args' errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

TEST(ShapeFitTest, DescriptorDeclaresScoreAndTheScoreIdentityHint) {
  auto p = create_plugin(SHAPE_FIT_SO, R"({"shapes": [{"cpu": 500}]})");
  EXPECT_EQ(p->name(), "ShapeFit");
  EXPECT_TRUE(p->has_score());
  EXPECT_FALSE(p->has_filter());
  EXPECT_FALSE(p->has_refresh());
  EXPECT_EQ(p->descriptor().normalize_policy, SCHEDPLUG_NORMALIZE_NONE);
  EXPECT_EQ(p->descriptor().events, 0u);
  EXPECT_EQ(p->settings().hints, SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY);
}

TEST(ShapeFitTest, ScoresTheSharedCases) {
  std::ifstream in(SHAPE_FIT_CASES);
  ASSERT_TRUE(in) << "cannot read " << SHAPE_FIT_CASES;
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const nlohmann::json& c : doc.at("cases")) {
    const std::string name = c.at("name");
    auto p = create_plugin(SHAPE_FIT_SO, c.at("args").dump());
    Pod pod("pod");
    for (const auto& [r, v] : c.at("pod").items()) {
      pod.request(r, v.get<int64_t>());
    }
    std::vector<Node> nodes;
    std::vector<Row> want;
    for (const nlohmann::json& n : c.at("nodes")) {
      Node node(n.at("name").get<std::string>());
      for (const auto& [r, v] : n.at("allocatable").items()) {
        node.allocatable(r, v.get<int64_t>());
      }
      for (const auto& [r, v] : n.at("requested").items()) {
        node.requested(r, v.get<int64_t>());
      }
      nodes.push_back(node);
      want.emplace_back(n.at("name").get<std::string>(), SCHEDPLUG_SKIP, "",
                        n.at("score").get<int64_t>());
    }
    const Cycle cycle = p->run(pod, nodes);
    EXPECT_EQ(compare(cycle, want), "") << name << "\n" << cycle.table();
  }
}

TEST(ShapeFitTest, ArgsErrorsNameTheArg) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{}", "arg \"shapes\" is required"},
      {R"({"shapes": [{"gpu": 1}]})",
       "arg \"shapes[0]\" requests \"gpu\", which is not in arg \"resources\""},
      {R"({"shapes": [{"cpu": 0}]})", "arg \"shapes[0]\" requests nothing"},
      {R"({"shapes": [{"cpu": "500m"}]})",
       "arg \"shapes[0]\".cpu must be a whole number"},
      {R"({"shapes": [{"cpu": 1}], "resolution": 0})", "resolution"},
      {R"({"shapes": [{"cpu": 1}], "resources": ["cpu", "memory", "pods", "a"], "resolution": 64})",
       "more than 1048576"},
      {R"({"shapes": [{"cpu": 1}], "resources": []})",
       "arg \"resources\" must list 1 to 4"},
      {R"({"shapes": [{"cpu": 1}], "resolutoin": 8})", "did you mean"},
      {R"({"shapes": [{"cpu": 1}], "resources": ["cpu", "cpu"]})",
       "arg \"resources\" lists \"cpu\" twice"},
  };
  for (const auto& [args, want] : cases) {
    try {
      create_plugin(SHAPE_FIT_SO, args);
      ADD_FAILURE() << args << ": created";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos)
          << args << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace schedplug::testing
