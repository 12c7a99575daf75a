// The test kit exercises declared events (SCHEDPLUG_EVENT_*): a change of a
// node is classified into the events kube-scheduler sees, and a change that
// turns a plugin's rejection of a pod into a pass must be an event the
// plugin declared, or the kit reports the broken promise once, naming the
// events to add. CpuRoom (cpu_room.cpp) declares what makes room for a pod;
// its under-declared build only SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "schedplug/testing.hpp"

namespace schedplug::testing {
namespace {

constexpr const char* kRejected = "Unschedulable (\"node(s) lack free CPU\")";
constexpr const char* kStays =
    "the pod would stay Pending until an unrelated event or the 5-minute "
    "flush of unschedulable pods";

Node full() {
  return Node("n1")
      .allocatable("cpu", 1000)
      .pod(NodePod("batch-1").request("cpu", 800));
}

TEST(KitEvents, ChangesAreTheEventsKubeSchedulerSees) {
  const Node n = Node("n").label("zone", "a").allocatable("cpu", 1000);
  EXPECT_EQ(change_events(n, n), 0u);
  EXPECT_EQ(change_events(n, Node(n).label("zone", "b")),
            SCHEDPLUG_EVENT_NODE_UPDATE_LABEL);
  EXPECT_EQ(change_events(n, Node(n).annotation("note", "x")),
            SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION);
  EXPECT_EQ(change_events(n, Node(n).taint({"gpu", "true"})),
            SCHEDPLUG_EVENT_NODE_UPDATE_TAINT);
  EXPECT_EQ(change_events(n, Node(n).allocatable("cpu", 2000)),
            SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE);
  EXPECT_EQ(change_events(Node(n).condition("Ready", "False"),
                          Node(n).condition("Ready", "True")),
            SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION);
  // Cordoning is no event, uncordoning is a taint update (kube-scheduler's
  // NodeSchedulingPropertiesChange); capacity and images are none.
  EXPECT_EQ(change_events(n, Node(n).unschedulable()), 0u);
  EXPECT_EQ(change_events(Node(n).unschedulable(), n),
            SCHEDPLUG_EVENT_NODE_UPDATE_TAINT);
  EXPECT_EQ(change_events(n, Node(n).capacity("cpu", 8000).image({"a:1"}, 9)),
            0u);
  EXPECT_EQ(
      change_events(n, Node(n).label("zone", "b").taint({"k", "v"})),
      SCHEDPLUG_EVENT_NODE_UPDATE_LABEL | SCHEDPLUG_EVENT_NODE_UPDATE_TAINT);
}

TEST(KitEvents, PodChangesComeFromTheListElseFromTheCounts) {
  const Node listed = Node("n").pod(NodePod("a").label("app", "x"));
  EXPECT_EQ(change_events(listed, Node(listed).pod(NodePod("b"))),
            SCHEDPLUG_EVENT_POD_ADD);
  EXPECT_EQ(change_events(listed, Node("n")), SCHEDPLUG_EVENT_POD_DELETE);
  EXPECT_EQ(change_events(listed, Node("n").pod(NodePod("a"))),
            SCHEDPLUG_EVENT_POD_UPDATE_LABEL);
  // A listed pod's requests changing in place is no event a plugin can
  // register, although the node's requested changes with it.
  EXPECT_EQ(change_events(Node(listed).pod(
                              NodePod("a").label("app", "x").request("cpu", 9)),
                          listed),
            0u);
  // Without lists: fewer pods or less requested is a pod deleted, more a
  // pod added.
  const Node counted = Node("n").pod_count(3).requested("cpu", 900);
  EXPECT_EQ(change_events(counted, Node(counted).requested("cpu", 100)),
            SCHEDPLUG_EVENT_POD_DELETE);
  EXPECT_EQ(change_events(counted, Node(counted).pod_count(4)),
            SCHEDPLUG_EVENT_POD_ADD);
  EXPECT_EQ(event_names(SCHEDPLUG_EVENT_POD_ADD | SCHEDPLUG_EVENT_POD_DELETE),
            "SCHEDPLUG_EVENT_POD_ADD | SCHEDPLUG_EVENT_POD_DELETE");
  EXPECT_EQ(event_names(0), "none");
}

// What CpuRoom's under-declared build says where the events it lacks would
// have requeued the pod: `turned` is how its filter turned.
std::string under_declared(const std::string& turned,
                           const std::string& change) {
  return "CpuRoom declares the events SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE "
         "(kEvents), but its filter " +
         turned + change +
         ", which it does not declare: kube-scheduler requeues a pod CpuRoom "
         "rejected only on the events it declared, so " +
         kStays + "; add it to kEvents, or declare 0 (every event)";
}

TEST(KitEvents, AnUnderDeclaredEventIsReportedWithTheEventToAdd) {
  auto plugin = Plugin::load(SDK_TEST_CPU_ROOM_UNDER_DECLARED_SO);
  EXPECT_EQ(plugin->requeue_events(), SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE);
  const Pod pod = Pod("web").request("cpu", 500);
  const std::string pod_left = under_declared(
      std::string("rejected pod \"web\" on node \"n1\" before the change (") +
          kRejected + ") and passes it after (Success)",
      ", and the change is SCHEDPLUG_EVENT_POD_DELETE");
  EXPECT_EQ(
      plugin->requeue_problem(pod, full(), Node("n1").allocatable("cpu", 1000)),
      pod_left);
  // sdk/README.md quotes it.
  std::ifstream readme(SDK_README);
  const std::string text((std::istreambuf_iterator<char>(readme)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(pod_left), std::string::npos)
      << "sdk/README.md's sentence of the under-declared CpuRoom is out of "
         "date; paste this one in:\n"
      << pod_left;
  EXPECT_EQ(plugin->requeue_problem(pod, Node("n2").allocatable("cpu", 4000)),
            under_declared("passes pod \"web\" on the added node \"n2\" "
                           "(Success)",
                           ", and a node added is SCHEDPLUG_EVENT_NODE_ADD"));
  // What it declares is enough for the node growing.
  EXPECT_EQ(plugin->requeue_problem(pod, full(),
                                    Node(full()).allocatable("cpu", 2000)),
            "");
  // In a cycle after the change the first broken promise fails the cycle,
  // and compare prints it once.
  const Cycle cycle = plugin->run_after(
      pod, {full(), Node("n3").allocatable("cpu", 100)},
      {Node("n1").allocatable("cpu", 1000), Node("n3").allocatable("cpu", 100),
       Node("n2").allocatable("cpu", 4000)});
  EXPECT_EQ(cycle.error, pod_left);
  EXPECT_EQ(
      compare(cycle, {{"n1"},
                      {"n3", SCHEDPLUG_UNSCHEDULABLE, "node(s) lack free CPU"},
                      {"n2"}}),
      "the cycle failed: " + pod_left +
          "\nthe cycle:\nn1  Success  score=-\nn3  Unschedulable "
          "(node(s) lack free CPU)  score=-\nn2  Success  score=-\n");
}

TEST(KitEvents, AChangeOfSeveralEventsNeedsOneOfThem) {
  auto plugin = Plugin::load(SDK_TEST_CPU_ROOM_UNDER_DECLARED_SO);
  const Pod pod = Pod("web").request("cpu", 500);
  // The pod leaves and the node gains a label: neither is declared.
  const std::string several = plugin->requeue_problem(
      pod, full(), Node("n1").allocatable("cpu", 1000).label("k", "v"));
  EXPECT_NE(several.find(", and the change is "
                         "SCHEDPLUG_EVENT_NODE_UPDATE_LABEL | "
                         "SCHEDPLUG_EVENT_POD_DELETE, none of which it "
                         "declares: "),
            std::string::npos)
      << several;
  EXPECT_NE(several.find("; add the one that let the pod pass to kEvents, or "
                         "declare 0 (every event)"),
            std::string::npos)
      << several;
  // With the allocatable growing as well, one declared event is enough.
  EXPECT_EQ(
      plugin->requeue_problem(
          pod, full(), Node("n1").allocatable("cpu", 1001).label("k", "v")),
      "");
}

TEST(KitEvents, AnAddedNodeCountsWhereThePodWasRejected) {
  auto plugin = Plugin::load(SDK_TEST_CPU_ROOM_UNDER_DECLARED_SO);
  const Pod pod = Pod("web").request("cpu", 500);
  const Node roomy = Node("roomy").allocatable("cpu", 4000);
  const Node added = Node("new").allocatable("cpu", 4000);
  // Nothing rejected the pod before: it would have been scheduled, and no
  // event matters.
  EXPECT_EQ(plugin->run_after(pod, {roomy}, {roomy, added}).error, "");
  // A node rejected it: the node added must requeue it.
  const Node tight = Node("tight").allocatable("cpu", 100);
  EXPECT_EQ(plugin->run_after(pod, {tight}, {tight, added}).error,
            under_declared("passes pod \"web\" on the added node \"new\" "
                           "(Success)",
                           ", and a node added is SCHEDPLUG_EVENT_NODE_ADD"));
}

TEST(KitEvents, ADeclaredEventRequeuesAndNothingIsReported) {
  auto plugin = Plugin::load(SDK_TEST_CPU_ROOM_SO);
  EXPECT_EQ(plugin->requeue_events(),
            SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE |
                SCHEDPLUG_EVENT_POD_DELETE);
  const Pod pod = Pod("web").request("cpu", 500);
  EXPECT_EQ(
      plugin->requeue_problem(pod, full(), Node("n1").allocatable("cpu", 1000)),
      "");
  EXPECT_EQ(plugin->requeue_problem(pod, Node("n2").allocatable("cpu", 4000)),
            "");
  const Cycle cycle = plugin->run_after(pod, {full()},
                                        {Node("n1").allocatable("cpu", 1000),
                                         Node("n2").allocatable("cpu", 600)});
  EXPECT_EQ(compare(cycle, {{"n1"}, {"n2"}}), "");
}

TEST(KitEvents, NoDeclaredEventsMeansEveryEvent) {
  // DataEcho declares no events: kube-scheduler requeues its pods on any.
  auto plugin = Plugin::load(SDK_TEST_DATA_ECHO_SO);
  EXPECT_EQ(plugin->descriptor().events, 0u);
  EXPECT_EQ(plugin->requeue_events(), SCHEDPLUG_EVENT_ALL);
}

TEST(KitEvents, AChangeNoEventReportsIsNamed) {
  auto plugin = Plugin::load(SDK_TEST_CPU_ROOM_SO);
  const Pod pod = Pod("web").request("cpu", 500);
  // The pod on the node shrinks in place: the node's requested drops, but
  // no event a plugin registers reports it.
  const Node before = Node("n1")
                          .allocatable("cpu", 1000)
                          .pod(NodePod("batch-1").request("cpu", 800));
  const Node after = Node("n1")
                         .allocatable("cpu", 1000)
                         .pod(NodePod("batch-1").request("cpu", 100));
  EXPECT_EQ(plugin->requeue_problem(pod, before, after),
            std::string("CpuRoom's filter rejected pod \"web\" on node \"n1\" "
                        "before the change (") +
                kRejected +
                ") and passes it after (Success), but the change is none of "
                "the cluster events kube-scheduler requeues a pod on "
                "(SCHEDPLUG_EVENT_*: a node's labels, taints, allocatable, "
                "annotations or condition statuses changing, "
                "spec.unschedulable turning false, a pod added to, deleted "
                "from or relabelled on the node), so whatever CpuRoom "
                "declares " +
                kStays +
                "; base the filter's verdict on what those events report "
                "(e.g. allocatable, not capacity)");
}

TEST(KitEvents, NothingToCheckIsSaid) {
  auto plugin = Plugin::load(SDK_TEST_CPU_ROOM_SO);
  const Pod pod = Pod("web").request("cpu", 500);
  const Node roomy = Node("n1").allocatable("cpu", 4000);
  EXPECT_EQ(plugin->requeue_problem(pod, roomy, full()),
            "CpuRoom's filter does not reject pod \"web\" on node \"n1\" "
            "before the change (Success), so no event is needed to requeue "
            "it; give as before a node the plugin rejects the pod on");
  EXPECT_EQ(plugin->requeue_problem(pod, full(), Node(full()).label("k", "v")),
            std::string("CpuRoom's filter still rejects pod \"web\" on node "
                        "\"n1\" after the change (") +
                kRejected +
                "); give as after the node changed so that the plugin passes "
                "the pod");
  EXPECT_EQ(plugin->requeue_problem(pod, full()),
            std::string("CpuRoom's filter rejects pod \"web\" on the added "
                        "node \"n1\" (") +
                kRejected + "); give a node the plugin passes the pod on");
  EXPECT_EQ(plugin->requeue_problem(pod, full(), Node("n2")),
            "before is node \"n1\" and after is node \"n2\"; give two states "
            "of one node (the same name), or check a node added on its own");
}

}  // namespace
}  // namespace schedplug::testing
