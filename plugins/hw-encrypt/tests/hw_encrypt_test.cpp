// HwEncrypt, loaded from its built .so with the SDK's test kit (the host's
// rules).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

constexpr const char* kAnnotation = "myorg.io/require-hw-encrypt";
constexpr const char* kLabel = "node.kubernetes.io/hw-encrypt";

struct Case {
  const char* name;
  KeyValues pod_annotations;
  KeyValues node_labels;
  bool applies;
  schedplug_code code;  // Filter's answer (called even when !applies, to
                        // check that Filter is right on its own)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class HwEncryptTable : public ::testing::TestWithParam<Case> {};

TEST_P(HwEncryptTable, AppliesAndFilter) {
  const Case& c = GetParam();
  auto plugin = create_plugin(HW_ENCRYPT_SO);
  auto pod = make_pod(c.pod_annotations);
  auto node = make_node("node-1", c.node_labels);

  // As a host older than ABI v1.1 runs it: applies(), then filter() on a
  // pod without state (BeginPod runs inside Filter).
  EXPECT_EQ(plugin->applies(pod->view()), c.applies);
  const Verdict v = plugin->filter(pod->view(), node->view());
  EXPECT_EQ(v.code, c.code) << v.reason;
  if (v.code == SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE) {
    EXPECT_FALSE(v.reason.empty());
  }
  // As this host runs it: pod_begin once, then filter() with the state.
  const PodScope scope = plugin->begin_pod(pod->view());
  EXPECT_TRUE(scope.error().empty()) << scope.error();
  EXPECT_EQ(scope.runs_filter(), c.applies);
  if (scope.runs_filter()) {
    EXPECT_NE(scope.pod().state, nullptr);
    const Verdict with_state = plugin->filter(scope.pod(), node->view());
    EXPECT_EQ(with_state.code, c.code);
    EXPECT_EQ(with_state.reason, v.reason);
  }
}

const KeyValues kWants = {{kAnnotation, "true"}};
const KeyValues kEncrypted = {{kLabel, "true"}};

INSTANTIATE_TEST_SUITE_P(
    Table, HwEncryptTable,
    ::testing::Values(
        Case{"AnnotationAbsent_NodeWithout", {}, {}, false, SCHEDPLUG_SUCCESS},
        Case{"AnnotationAbsent_NodeWith",
             {},
             kEncrypted,
             false,
             SCHEDPLUG_SUCCESS},
        Case{"AnnotationTrue_NodeWith", kWants, kEncrypted, true,
             SCHEDPLUG_SUCCESS},
        Case{"AnnotationTrue_LabelMissing",
             kWants,
             {{"other", "true"}},
             true,
             SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE},
        Case{"AnnotationTrue_LabelFalse",
             kWants,
             {{kLabel, "false"}},
             true,
             SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE},
        Case{"AnnotationTrue_LabelValueCase",
             kWants,
             {{kLabel, "True"}},
             true,
             SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE},
        Case{"AnnotationTrue_LabelKeyDiffersInCase",
             kWants,
             {{"node.kubernetes.io/HW-Encrypt", "true"}},
             true,
             SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE},
        Case{"AnnotationFalse_NodeWithout",
             {{kAnnotation, "false"}},
             {},
             false,
             SCHEDPLUG_SUCCESS},
        Case{"AnnotationKeyDiffersInCase_NodeWithout",
             {{"myorg.io/Require-HW-Encrypt", "true"}},
             {},
             false,
             SCHEDPLUG_SUCCESS},
        // A value that is neither "true" nor "false" is a typo: fail closed.
        Case{"AnnotationTypo_NodeWith",
             {{kAnnotation, "yes"}},
             kEncrypted,
             true,
             SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE}),
    [](const ::testing::TestParamInfo<Case>& param) {
      return std::string(param.param.name);
    });

TEST(HwEncrypt, ReasonReadsWellInTheSchedulersMessage) {
  auto plugin = create_plugin(HW_ENCRYPT_SO);
  auto pod = make_pod(kWants);
  auto node = make_node("node-1");
  const Verdict v = plugin->filter(pod->view(), node->view());
  // kube-scheduler prints "0/5 nodes are available: 3 <reason>."
  EXPECT_EQ("0/5 nodes are available: 3 " + v.reason + ".",
            "0/5 nodes are available: 3 node(s) didn't have hardware "
            "encryption (label node.kubernetes.io/hw-encrypt=true).");
}

TEST(HwEncrypt, KeysComeFromArgs) {
  auto plugin = create_plugin(
      HW_ENCRYPT_SO,
      R"({"podAnnotation": "acme.io/secure", "nodeLabel": "acme.io/tpm"})");
  auto pod = make_pod({{"acme.io/secure", "true"}});
  EXPECT_TRUE(plugin->applies(pod->view()));
  EXPECT_FALSE(plugin->applies(make_pod(kWants)->view()));

  EXPECT_TRUE(plugin
                  ->filter(pod->view(),
                           make_node("a", {{"acme.io/tpm", "true"}})->view())
                  .ok());
  const Verdict v =
      plugin->filter(pod->view(), make_node("b", kEncrypted)->view());
  EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_NE(v.reason.find("acme.io/tpm=true"), std::string::npos) << v.reason;
}

TEST(HwEncrypt, BadArgsFailCreateWithTheArgsName) {
  const struct {
    const char* args;
    const char* expect;
  } cases[] = {
      {R"({"nodeLabel": 5})", "arg \"nodeLabel\" must be a non-empty string"},
      {R"({"nodeLabel": ""})", "arg \"nodeLabel\" must be a non-empty string"},
      {R"({"nodelabel": "x"})", "did you mean \"nodeLabel\""},
      {R"({"colour": "x"})", "unknown arg \"colour\""},
      {R"([1, 2])", "args must be an object"},
      {R"({"nodeLabel": )", "not valid JSON"},
  };
  for (const auto& c : cases) {
    try {
      create_plugin(HW_ENCRYPT_SO, c.args);
      ADD_FAILURE() << "create accepted " << c.args;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << c.args << " -> " << e.what();
    }
  }
}

TEST(HwEncrypt, DescriptorOffersOnlyFilter) {
  auto lib = Plugin::load(HW_ENCRYPT_SO);
  EXPECT_EQ(lib->name(), "HwEncrypt");
  EXPECT_TRUE(lib->has_filter());
  EXPECT_FALSE(lib->has_score());
  EXPECT_FALSE(lib->has_refresh());
  EXPECT_NE(lib->descriptor().applies, nullptr);
  EXPECT_EQ(lib->descriptor().events,
            SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL);
}

// kube-scheduler requeues a pod HwEncrypt rejected only on the events it
// declared: labelling a node, or adding a labelled one, must be among them.
TEST(HwEncrypt, ItsEventsRequeueWhatLabellingLetsThrough) {
  auto plugin = create_plugin(HW_ENCRYPT_SO);
  auto pod = make_pod(kWants);
  const auto plain = make_node("node-1");
  const auto labelled = make_node("node-1", kEncrypted);
  EXPECT_EQ(plugin->requeue_problem(*pod, *plain, *labelled), "");
  EXPECT_EQ(plugin->requeue_problem(*pod, *labelled), "");
}

// Filter runs concurrently on one instance (plugin.h's contract): every
// thread must get the same answers. Run under ThreadSanitizer for races.
TEST(HwEncrypt, ConcurrentFilterOnOneInstance) {
  auto plugin = create_plugin(HW_ENCRYPT_SO);
  auto pod = make_pod(kWants);
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < 200; ++i) {
    nodes.push_back(make_node("n" + std::to_string(i),
                              {{kLabel, i % 3 == 0 ? "true" : "false"}}));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        for (size_t i = 0; i < nodes.size(); ++i) {
          const Verdict v = plugin->filter(pod->view(), nodes[i]->view());
          if (v.ok() != (i % 3 == 0)) wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace schedplug::testing
