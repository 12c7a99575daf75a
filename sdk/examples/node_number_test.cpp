// NodeNumber's test (its C and C++ builds): the pod's spec.nodeName against
// each node's name, with and without `reverse`, as schedplug-host runs it.
#include <schedplug/testing.hpp>

#include <cstdio>
#include <string>

namespace st = schedplug::testing;

static int check(const char* so) {
  const st::Node nodes[] = {st::Node("node1"), st::Node("node3"),
                            st::Node("nodeX")};
  const st::Pod on3 = st::Pod("web").node_name("node3");
  const st::Pod unplaced = st::Pod("web");  // spec.nodeName empty
  std::string diff;
  auto plugin = st::Plugin::load(so, "{}");
  if (plugin->settings().data != SCHEDPLUG_DATA_POD_NODE_NAME) {
    diff += "NodeNumber must declare SCHEDPLUG_DATA_POD_NODE_NAME\n";
  }
  diff +=
      st::compare(plugin->run(on3, nodes), {{"node1", SCHEDPLUG_SKIP, "", 0},
                                            {"node3", SCHEDPLUG_SKIP, "", 10},
                                            {"nodeX", SCHEDPLUG_SKIP, "", 0}});
  // No digit at the end of spec.nodeName: every node matches.
  diff += st::compare(plugin->run(unplaced, nodes),
                      {{"node1", SCHEDPLUG_SKIP, "", 10},
                       {"node3", SCHEDPLUG_SKIP, "", 10},
                       {"nodeX", SCHEDPLUG_SKIP, "", 10}});
  auto reverse = st::Plugin::load(so, R"({"reverse": true})");
  diff += st::compare(reverse->run(on3, nodes),
                      {{"node1", SCHEDPLUG_SKIP, "", 10},
                       {"node3", SCHEDPLUG_SKIP, "", 0},
                       {"nodeX", SCHEDPLUG_SKIP, "", 10}});
  try {
    st::Plugin::load(so, R"({"revers": true})");
    diff += "a misspelt arg was accepted\n";
  } catch (const st::Error& e) {
    if (std::string(e.what()).find("\"reverse\"") == std::string::npos) {
      diff += std::string("the message does not suggest reverse: ") + e.what();
    }
  }
  if (!diff.empty()) std::fprintf(stderr, "%s: %s", so, diff.c_str());
  return diff.empty() ? 0 : 1;
}

int main() { return check(NODE_NUMBER_SO) | check(NODE_NUMBER_C_SO); }
