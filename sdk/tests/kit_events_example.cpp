// CpuRoom's events: a pod it rejected for want of CPU must be requeued by
// each change that makes room for it. CpuRoom (sdk/tests/cpu_room.cpp)
// declares SCHEDPLUG_EVENT_NODE_ADD, _NODE_UPDATE_ALLOCATABLE and
// _POD_DELETE in kEvents.
#include <schedplug/testing.hpp>

#include <cstdio>
#include <string>

namespace st = schedplug::testing;

int main() {
  auto plugin = st::Plugin::load(SDK_TEST_CPU_ROOM_SO);
  const st::Pod pod = st::Pod("web").request("cpu", 500);
  const st::Node full = st::Node("n1")
                            .allocatable("cpu", 1000)
                            .pod(st::NodePod("batch-1").request("cpu", 800));
  // A pod leaves the node, the node grows, a roomy node joins: each lets
  // the pod pass, so each must be an event CpuRoom declared.
  std::string problems =
      plugin->requeue_problem(pod, full,
                              st::Node("n1").allocatable("cpu", 1000)) +
      plugin->requeue_problem(pod, full,
                              st::Node(full).allocatable("cpu", 2000)) +
      plugin->requeue_problem(pod, st::Node("n2").allocatable("cpu", 4000));
  // The same checks on a cycle after the change (any broken one is its
  // error), with the rows compared as usual.
  const st::Cycle cycle =
      plugin->run_after(pod, {full},
                        {st::Node("n1").allocatable("cpu", 1000),
                         st::Node("n2").allocatable("cpu", 4000)});
  problems += st::compare(cycle, {{"n1"}, {"n2"}});
  if (!problems.empty()) std::fprintf(stderr, "%s\n", problems.c_str());
  return problems.empty() ? 0 : 1;
}
