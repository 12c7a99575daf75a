// plugin_smoke FILE.so ARGS_JSON: loads a plugin the way schedplug-host does
// (the host's own loader and runtime), creates it with ARGS_JSON and runs
// each hook it offers on a sample pod and node. Prints what it saw; exits 1
// with the host's message when loading or creating fails. Used by the
// out-of-tree SDK test on plugins built against the installed SDK.
#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"

using namespace schedplug::host;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FILE.so ARGS_JSON\n", argv[0]);
    return 2;
  }
  try {
    auto lib = load_plugin_file(argv[1]);
    auto plugin = PluginInstance::create(lib, argv[2]);
    std::printf("name=%s version=%s filter=%d score=%d\n", lib->name().c_str(),
                lib->version().c_str(), lib->has_filter(), lib->has_score());

    PodData pod;
    pod.namespace_name = "default";
    pod.name = "web";
    pod.requests = {{"cpu", 250}};
    NodeData a;
    a.name = "roomy";
    a.labels = {{"topology.kubernetes.io/zone", "z1"}};
    a.allocatable = {{"cpu", 4000}};
    a.requested = {{"cpu", 1000}};
    NodeData b;
    b.name = "full";
    b.allocatable = {{"cpu", 1000}};
    b.requested = {{"cpu", 700}};
    const PodModel p(pod);
    const NodeModel na(a), nb(b);

    for (const NodeModel* n : {&na, &nb}) {
      const Verdict v = plugin->filter(p.view(), n->view());
      std::printf("filter %s code=%d reason=%s\n", n->name().c_str(),
                  static_cast<int>(v.code), v.reason.c_str());
    }
    if (lib->has_score()) {
      std::vector<schedplug_node_score> scores;
      for (const NodeModel* n : {&na, &nb}) {
        const ScoreResult r = plugin->score(p.view(), n->view());
        std::printf("score %s code=%d raw=%lld\n", n->name().c_str(),
                    static_cast<int>(r.code), static_cast<long long>(r.score));
        scores.push_back({n->view().name, r.score});
      }
      const Verdict v = plugin->normalize(p.view(), scores);
      std::printf("normalize code=%d roomy=%lld full=%lld\n",
                  static_cast<int>(v.code),
                  static_cast<long long>(scores[0].score),
                  static_cast<long long>(scores[1].score));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
