// SlotOwner's hooks in a unit test: reserve two slots, check the next pod
// no longer fits, read what pre_bind writes, and hold unreserve to its
// promise. SlotOwner (sdk/tests/slot_owner.cpp) hands out the slots a
// node's label slots.example.com/count says.
#include <schedplug/testing.hpp>

#include <cstdio>
#include <string>

namespace st = schedplug::testing;

int main() {
  auto plugin = st::Plugin::load(SDK_TEST_SLOT_OWNER_SO);
  const st::Node node = st::Node("n1").label("slots.example.com/count", "3");
  const st::Pod a =
      st::Pod("a").uid("uid-a").annotation("slots.example.com/want", "2");
  const st::Pod b =
      st::Pod("b").uid("uid-b").annotation("slots.example.com/want", "2");
  std::string problems;
  if (!plugin->reserve(a, node).ok()) problems += "a did not reserve; ";
  if (plugin->filter(b, node).code != SCHEDPLUG_UNSCHEDULABLE) {
    problems += "b still fits after a reserved; ";
  }
  // The patch as the host would write it, checked by the host's rules.
  const st::PreBindResult bound = plugin->pre_bind(a, node);
  if (bound.code != SCHEDPLUG_SUCCESS ||
      bound.labels.at("slots.example.com/assigned") != "0-1") {
    problems += "pre_bind: " + bound.reason + "; ";
  }
  plugin->unreserve(a, node);
  // Unreserve twice, and for a pod never reserved, changes nothing.
  problems += plugin->unreserve_problem(b, node);
  if (!problems.empty()) std::fprintf(stderr, "%s\n", problems.c_str());
  return problems.empty() ? 0 : 1;
}
