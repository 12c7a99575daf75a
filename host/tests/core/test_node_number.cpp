// The SDK's NodeNumber example (sdk/examples/node_number.{c,cpp}, a literal
// port of the kube-scheduler-wasm-extension's examples/nodenumber) through
// the host's loader and runtime: the pod's spec.nodeName (ABI v1.2 data it
// declares) against the node's name, its `reverse` arg, its events.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {
namespace {

class NodeNumberTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::shared_ptr<const PluginLibrary> lib() const {
    return load_plugin_file(std::filesystem::path(SCHEDPLUG_EXAMPLES_DIR) /
                            GetParam());
  }
  // The raw scores of `plugin` for a pod with spec.nodeName `node_name` on
  // nodes node1, node3 and nodeX, through pod_begin as the host calls it.
  static std::vector<int64_t> scores(const PluginInstance& plugin,
                                     const std::string& node_name) {
    PodData d;
    d.namespace_name = "default";
    d.name = "pod";
    d.node_name = node_name;
    const PodModel pod(std::move(d));
    const PodScope scope = plugin.begin_pod(pod.view());
    EXPECT_TRUE(scope.error().empty()) << scope.error();
    EXPECT_TRUE(scope.runs_score());
    std::vector<int64_t> out;
    for (const char* name : {"node1", "node3", "nodeX"}) {
      NodeData n;
      n.name = name;
      const NodeModel node(std::move(n));
      const ScoreResult r = plugin.score(scope.pod(), node.view());
      EXPECT_EQ(r.code, SCHEDPLUG_SUCCESS) << r.reason;
      out.push_back(r.score);
    }
    return out;
  }
};

TEST_P(NodeNumberTest, ScoresTheNodeWithThePodsLastDigit) {
  const auto library = lib();
  EXPECT_EQ(library->name(), "NodeNumber");
  EXPECT_TRUE(library->has_score());
  EXPECT_FALSE(library->has_filter());
  const auto plain = PluginInstance::create(library, "{}");
  EXPECT_EQ(plain->settings().data, SCHEDPLUG_DATA_POD_NODE_NAME)
      << "spec.nodeName must be declared, or the shim never sends it";
  EXPECT_EQ(plain->settings().events, SCHEDPLUG_EVENT_NODE_ADD);
  EXPECT_EQ(scores(*plain, "pod3"), (std::vector<int64_t>{0, 10, 0}));
  EXPECT_EQ(scores(*plain, "x1"), (std::vector<int64_t>{10, 0, 0}));
  // No digit at the end of spec.nodeName (or none at all): every node
  // matches, as in the original.
  EXPECT_EQ(scores(*plain, ""), (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(scores(*plain, "podX"), (std::vector<int64_t>{10, 10, 10}));

  const auto reverse = PluginInstance::create(library, R"({"reverse": true})");
  EXPECT_EQ(scores(*reverse, "pod3"), (std::vector<int64_t>{10, 0, 10}));
  EXPECT_EQ(scores(*reverse, ""), (std::vector<int64_t>{0, 0, 0}));
  const auto explicit_false =
      PluginInstance::create(library, R"({"reverse": false})");
  EXPECT_EQ(scores(*explicit_false, "pod3"), (std::vector<int64_t>{0, 10, 0}));
}

TEST_P(NodeNumberTest, BadArgsAreNamed) {
  const auto library = lib();
  try {
    PluginInstance::create(library, R"({"reverse": "yes"})");
    ADD_FAILURE() << "a string for reverse was accepted";
  } catch (const CreateError& e) {
    EXPECT_NE(std::string(e.what()).find("reverse"), std::string::npos)
        << e.what();
  }
  try {
    PluginInstance::create(library, R"({"revers": true})");
    ADD_FAILURE() << "a misspelt arg was accepted";
  } catch (const CreateError& e) {
    EXPECT_NE(std::string(e.what()).find("\"reverse\""), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(CAndCpp, NodeNumberTest,
                         ::testing::Values("node_number_c.so",
                                           "node_number.so"));

}  // namespace
}  // namespace schedplug::host
