// SpareCpu's test: one pod over three nodes, as schedplug-host runs it.
#include <schedplug/testing.hpp>

#include <cstdio>

namespace st = schedplug::testing;

int main() {
  auto plugin =
      st::Plugin::load(SPARE_CPU_SO, R"({"headroomMillicores": 500})");
  const st::Pod pod = st::Pod("web").request("cpu", 250);
  const st::Cycle cycle = plugin->run(
      pod, {st::Node("roomy").allocatable("cpu", 4000).requested("cpu", 1000),
            st::Node("half").allocatable("cpu", 2000).requested("cpu", 1000),
            st::Node("full").allocatable("cpu", 1000).requested("cpu", 700)});
  const std::string diff =
      st::compare(cycle, {{"roomy", SCHEDPLUG_SUCCESS, "", 100},
                          {"half", SCHEDPLUG_SUCCESS, "", 0},
                          {"full", SCHEDPLUG_UNSCHEDULABLE,
                           "node(s) would keep less than 500m CPU spare"}});
  if (!diff.empty()) std::fprintf(stderr, "%s", diff.c_str());
  return diff.empty() ? 0 : 1;
}
