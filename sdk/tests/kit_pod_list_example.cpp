// PodsOnNode's test: it scores a node by the pods already on it that share
// the pod's "app" label, read from the node's pod list
// (SCHEDPLUG_DATA_NODE_PODS, which it declares).
#include <schedplug/testing.hpp>

#include <cstdio>

namespace st = schedplug::testing;

int main() {
  auto plugin = st::Plugin::load(SDK_TEST_PODS_ON_NODE_SO);
  const st::Pod pod = st::Pod("web-3").label("app", "web");
  const st::Cycle cycle = plugin->run(
      pod,
      {st::Node("busy")
           .pod(st::NodePod("web-1")
                    .label("app", "web")
                    .owner_kind("ReplicaSet"))
           .pod(st::NodePod("web-2").label("app", "web").request("cpu", 250))
           .pod(st::NodePod("db-0", "data").label("app", "db").priority(1000)),
       st::Node("quiet").pod(st::NodePod("web-9").label("app", "web")),
       st::Node("empty")});
  // No Filter hook: Skip. Raw scores 2, 1, 0; LINEAR maps the highest to 100.
  const std::string diff =
      st::compare(cycle, {{"busy", SCHEDPLUG_SKIP, "", 100},
                          {"quiet", SCHEDPLUG_SKIP, "", 50},
                          {"empty", SCHEDPLUG_SKIP, "", 0}});
  if (!diff.empty()) std::fprintf(stderr, "%s", diff.c_str());
  return diff.empty() ? 0 : 1;
}
