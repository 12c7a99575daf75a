// DedicatedNodes (plain C), loaded from its built .so with the SDK's test
// kit (the host's rules).
#include <gtest/gtest.h>

#include <string>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

constexpr const char* kLabel = "schedplug.io/dedicated";
constexpr const char* kAnnotation = "schedplug.io/dedicated-ok";

struct Case {
  const char* name;
  KeyValues pod_annotations;
  KeyValues node_labels;
  schedplug_code code;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class DedicatedNodesTable : public ::testing::TestWithParam<Case> {};

TEST_P(DedicatedNodesTable, Filter) {
  const Case& c = GetParam();
  auto plugin = create_plugin(DEDICATED_NODES_SO);
  auto pod = make_pod(c.pod_annotations);
  auto node = make_node("node-1", c.node_labels);
  EXPECT_TRUE(plugin->applies(pod->view()));  // no applies hook: every pod
  const Verdict v = plugin->filter(pod->view(), node->view());
  EXPECT_EQ(v.code, c.code) << v.reason;
  if (c.code != SCHEDPLUG_SUCCESS) {
    EXPECT_EQ(v.reason,
              "node(s) were dedicated (schedplug.io/dedicated=true) and the "
              "pod lacks annotation schedplug.io/dedicated-ok=true");
  }
}

const KeyValues kOptedIn = {{kAnnotation, "true"}};
const KeyValues kDedicated = {{kLabel, "true"}};
constexpr auto kReject = SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;

INSTANTIATE_TEST_SUITE_P(
    Table, DedicatedNodesTable,
    ::testing::Values(
        // Dedicated node: only opted-in pods.
        Case{"AnnotationAbsent_Dedicated", {}, kDedicated, kReject},
        Case{"AnnotationTrue_Dedicated", kOptedIn, kDedicated,
             SCHEDPLUG_SUCCESS},
        Case{"AnnotationFalse_Dedicated",
             {{kAnnotation, "false"}},
             kDedicated,
             kReject},
        Case{"AnnotationValueCase_Dedicated",
             {{kAnnotation, "True"}},
             kDedicated,
             kReject},
        Case{"AnnotationKeyDiffersInCase_Dedicated",
             {{"schedplug.io/Dedicated-OK", "true"}},
             kDedicated,
             kReject},
        // Not dedicated: everyone.
        Case{"AnnotationAbsent_LabelMissing", {}, {}, SCHEDPLUG_SUCCESS},
        Case{"AnnotationTrue_LabelMissing", kOptedIn, {}, SCHEDPLUG_SUCCESS},
        Case{"AnnotationAbsent_LabelFalse",
             {},
             {{kLabel, "false"}},
             SCHEDPLUG_SUCCESS},
        Case{"AnnotationAbsent_LabelKeyDiffersInCase",
             {},
             {{"schedplug.io/Dedicated", "true"}},
             SCHEDPLUG_SUCCESS}),
    [](const ::testing::TestParamInfo<Case>& param) {
      return std::string(param.param.name);
    });

TEST(DedicatedNodes, KeysComeFromArgs) {
  auto plugin = create_plugin(
      DEDICATED_NODES_SO,
      R"({ "nodeLabel" : "acme.io/gpu-pool", "podAnnotation": "acme.io/gpu-ok" })");
  auto node = make_node("gpu-1", {{"acme.io/gpu-pool", "true"}});
  EXPECT_TRUE(
      plugin
          ->filter(make_pod({{"acme.io/gpu-ok", "true"}})->view(), node->view())
          .ok());
  const Verdict v =
      plugin->filter(make_pod({{kAnnotation, "true"}})->view(), node->view());
  EXPECT_EQ(v.code, kReject);
  EXPECT_EQ(v.reason,
            "node(s) were dedicated (acme.io/gpu-pool=true) and the pod lacks "
            "annotation acme.io/gpu-ok=true");
  // The default label no longer means anything.
  EXPECT_TRUE(
      plugin->filter(make_pod({})->view(), make_node("n", kDedicated)->view())
          .ok());
}

TEST(DedicatedNodes, BadArgsFailCreateWithAClearMessage) {
  const struct {
    const char* args;
    const char* expect;
  } cases[] = {
      {R"({"nodeLabel": 1})",
       "arg \"nodeLabel\" must be a non-empty string, got 1"},
      {R"({"nodeLabel": ""})", "arg \"nodeLabel\" must be a non-empty string"},
      {R"({"podAnnotation": ["a"]})",
       "arg \"podAnnotation\" must be a non-empty string, got [\"a\"]"},
      {R"({"NodeLabel": "x"})",
       "did you mean \"nodeLabel\"? arg names are case-sensitive"},
      {R"({"nodeLabl": "x"})",
       "unknown arg \"nodeLabl\"; did you mean \"nodeLabel\"? known args: "
       "nodeLabel, podAnnotation"},
      {R"({"zone": "x"})",
       "unknown arg \"zone\"; known args: nodeLabel, podAnnotation"},
      {R"(["nodeLabel"])", "args must be an object of named values, got array"},
      {R"({"nodeLabel": "a"} x)", "args are not valid JSON"},
  };
  for (const auto& c : cases) {
    try {
      create_plugin(DEDICATED_NODES_SO, c.args);
      ADD_FAILURE() << "create accepted " << c.args;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << c.args << " -> " << e.what();
    }
  }
}

TEST(DedicatedNodes, DescriptorOffersOnlyFilter) {
  auto lib = Plugin::load(DEDICATED_NODES_SO);
  EXPECT_EQ(lib->name(), "DedicatedNodes");
  EXPECT_TRUE(lib->has_filter());
  EXPECT_FALSE(lib->has_score());
  EXPECT_EQ(lib->descriptor().applies, nullptr);
}

// kube-scheduler requeues a pod DedicatedNodes rejected only on the events
// it declared: a node losing its dedicated label, or a plain node added,
// must be among them.
TEST(DedicatedNodes, ItsEventsRequeueWhatUndedicatingLetsThrough) {
  auto plugin = create_plugin(DEDICATED_NODES_SO);
  auto pod = make_pod({});
  const auto dedicated = make_node("node-1", kDedicated);
  const auto plain = make_node("node-1");
  EXPECT_EQ(plugin->requeue_problem(*pod, *dedicated, *plain), "");
  EXPECT_EQ(plugin->requeue_problem(*pod, *plain), "");
}

}  // namespace
}  // namespace schedplug::testing
