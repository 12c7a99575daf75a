// Cost of the sample plugins' hooks per node, called through the host's
// runtime (PluginInstance) on the built .so files, over 5000 nodes: what one
// pod costs each plugin on a 5000-node cluster, single-threaded.
//
// HwEncrypt and NetworkLatency use per-pod state (ABI v1.1 pod_begin). The
// *_NoPodState benchmarks call them as a host without pod_begin does (pod
// view without state: the per-pod work runs in every call, as before v1.1);
// the *_PodState ones as schedplug-host does (pod_begin once, then every
// node with the state).
//
// SpotNodes is the Rust sample (plugins/spot-nodes): its benchmarks sit
// beside the C++ HwEncrypt and the C DedicatedNodes, which do the same kind
// of work per node (one label looked up and compared).
//
//   ninja -C build plugins_bench && build/plugins/bench/plugins_bench
//
// SCHEDPLUG_BENCH_BASELINE_SO=<plugin.so> adds BM_Baseline_Filter and
// BM_Baseline_FilterDirect for that file (a pod without annotations), to
// compare two builds of a plugin in one run.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace {

using namespace schedplug::host;

constexpr int kNodes = 5000;

std::unique_ptr<PluginInstance> create(const char* file,
                                       const std::string& args = "{}") {
  return PluginInstance::create(load_plugin_file(file), args);
}

// 5000 nodes with a realistic handful of labels; every other node has
// hardware encryption, every fourth is dedicated, every third spot.
const std::vector<std::unique_ptr<NodeModel>>& nodes() {
  static const auto all = [] {
    std::vector<std::unique_ptr<NodeModel>> out;
    for (int i = 0; i < kNodes; ++i) {
      NodeData d;
      d.name = "node-" + std::to_string(i);
      d.labels = {
          {"kubernetes.io/arch", "amd64"},
          {"kubernetes.io/hostname", d.name},
          {"kubernetes.io/os", "linux"},
          {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)},
          {"node.kubernetes.io/instance-type", "m5.xlarge"},
          {"node.kubernetes.io/hw-encrypt", i % 2 ? "true" : "false"},
          {"schedplug.io/dedicated", i % 4 ? "false" : "true"},
          {"node.kubernetes.io/capacity-type", i % 3 ? "on-demand" : "spot"}};
      d.allocatable = {{"cpu", 4000}, {"memory", 16LL << 30}, {"pods", 110}};
      out.push_back(std::make_unique<NodeModel>(std::move(d)));
    }
    return out;
  }();
  return all;
}

std::unique_ptr<PodModel> pod(KeyValues annotations) {
  PodData d;
  d.namespace_name = "default";
  d.name = "web-0";
  d.annotations = std::move(annotations);
  d.annotations.push_back(
      {"kubectl.kubernetes.io/last-applied-configuration", "{}"});
  return std::make_unique<PodModel>(std::move(d));
}

// As schedplug-host runs a filter: begin the pod once (gate and state),
// then every node with the pod's state.
void FilterAll(benchmark::State& state, const PluginInstance& p,
               const PodModel& pod) {
  const auto& all = nodes();
  int64_t feasible = 0;
  for (auto _ : state) {
    feasible = 0;
    const PodScope scope = p.begin_pod(pod.view());
    if (!scope.runs_filter()) continue;
    for (const auto& n : all) feasible += p.filter(scope.pod(), n->view()).ok();
    benchmark::DoNotOptimize(feasible);
  }
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kNodes,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// As a host without per-pod state runs it: applies(), then every node with
// the bare pod view (the plugin redoes its per-pod work in each call).
void FilterAllNoPodState(benchmark::State& state, const PluginInstance& p,
                         const PodModel& pod) {
  const auto& all = nodes();
  int64_t feasible = 0;
  for (auto _ : state) {
    feasible = 0;
    if (!p.applies(pod.view())) continue;
    for (const auto& n : all) feasible += p.filter(pod.view(), n->view()).ok();
    benchmark::DoNotOptimize(feasible);
  }
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kNodes,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_HwEncrypt_Filter(benchmark::State& state) {
  auto p = create(HW_ENCRYPT_SO);
  FilterAll(state, *p, *pod({{"myorg.io/require-hw-encrypt", "true"}}));
}
BENCHMARK(BM_HwEncrypt_Filter)->Unit(benchmark::kMicrosecond);

void BM_HwEncrypt_Filter_NoPodState(benchmark::State& state) {
  auto p = create(HW_ENCRYPT_SO);
  FilterAllNoPodState(state, *p,
                      *pod({{"myorg.io/require-hw-encrypt", "true"}}));
}
BENCHMARK(BM_HwEncrypt_Filter_NoPodState)->Unit(benchmark::kMicrosecond);

void BM_HwEncrypt_PodWithoutAnnotation(benchmark::State& state) {
  auto p = create(HW_ENCRYPT_SO);
  FilterAll(state, *p, *pod({}));
}
BENCHMARK(BM_HwEncrypt_PodWithoutAnnotation)->Unit(benchmark::kMicrosecond);

void BM_DedicatedNodes_Filter(benchmark::State& state) {
  auto p = create(DEDICATED_NODES_SO);
  FilterAll(state, *p, *pod({}));
}
BENCHMARK(BM_DedicatedNodes_Filter)->Unit(benchmark::kMicrosecond);

// The plugin alone: its filter() called straight through the descriptor, as
// a lower bound for what the host's runtime adds per call.
void FilterDirect(benchmark::State& state, const char* file,
                  const PodModel& pod) {
  const auto lib = load_plugin_file(file);
  const schedplug_plugin& d = lib->descriptor();
  void* instance = nullptr;
  char text[SCHEDPLUG_REASON_MAX];
  schedplug_reason reason{text, sizeof text};
  if (d.create("{}", 2, nullptr, &instance, &reason) != SCHEDPLUG_SUCCESS) {
    state.SkipWithError("create failed");
    return;
  }
  const auto& all = nodes();
  int64_t feasible = 0;
  for (auto _ : state) {
    feasible = 0;
    for (const auto& n : all) {
      text[0] = '\0';
      feasible += d.filter(instance, &pod.view(), &n->view(), &reason) ==
                  SCHEDPLUG_SUCCESS;
    }
    benchmark::DoNotOptimize(feasible);
  }
  d.destroy(instance);
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kNodes,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_HwEncrypt_FilterDirect(benchmark::State& state) {
  FilterDirect(state, HW_ENCRYPT_SO,
               *pod({{"myorg.io/require-hw-encrypt", "true"}}));
}
BENCHMARK(BM_HwEncrypt_FilterDirect)->Unit(benchmark::kMicrosecond);

void BM_DedicatedNodes_FilterDirect(benchmark::State& state) {
  FilterDirect(state, DEDICATED_NODES_SO, *pod({}));
}
BENCHMARK(BM_DedicatedNodes_FilterDirect)->Unit(benchmark::kMicrosecond);

// SpotNodes' filter written with the C++ layer (spot_nodes_twin.cpp).
void BM_SpotNodesTwin_Filter(benchmark::State& state) {
  auto p = create(SPOT_NODES_TWIN_SO);
  FilterAll(state, *p, *pod({}));
}
BENCHMARK(BM_SpotNodesTwin_Filter)->Unit(benchmark::kMicrosecond);

void BM_SpotNodesTwin_FilterDirect(benchmark::State& state) {
  FilterDirect(state, SPOT_NODES_TWIN_SO, *pod({}));
}
BENCHMARK(BM_SpotNodesTwin_FilterDirect)->Unit(benchmark::kMicrosecond);

#ifdef SPOT_NODES_SO
void BM_SpotNodes_Filter(benchmark::State& state) {
  auto p = create(SPOT_NODES_SO);
  FilterAll(state, *p, *pod({}));
}
BENCHMARK(BM_SpotNodes_Filter)->Unit(benchmark::kMicrosecond);

void BM_SpotNodes_FilterDirect(benchmark::State& state) {
  FilterDirect(state, SPOT_NODES_SO, *pod({}));
}
BENCHMARK(BM_SpotNodes_FilterDirect)->Unit(benchmark::kMicrosecond);

// An interruptible pod: pod_begin closes the Filter gate, Score runs on
// every node, scores already in [0, 100] (normalization: none).
void BM_SpotNodes_ScoreAndNormalize(benchmark::State& state) {
  auto p = create(SPOT_NODES_SO);
  auto the_pod = pod({{"schedplug.io/interruptible", "true"}});
  const auto& all = nodes();
  std::vector<schedplug_node_score> scores(all.size());
  for (auto _ : state) {
    const PodScope scope = p->begin_pod(the_pod->view());
    for (size_t i = 0; i < all.size(); ++i) {
      scores[i] = {all[i]->view().name,
                   p->score(scope.pod(), all[i]->view()).score};
    }
    benchmark::DoNotOptimize(p->normalize(scope.pod(), scores));
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kNodes,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SpotNodes_ScoreAndNormalize)->Unit(benchmark::kMicrosecond);
#endif

void BM_NetworkLatency_ScoreAndNormalize(benchmark::State& state) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("plugins_bench_latency." + std::to_string(::getpid()) + ".txt");
  {
    std::ofstream out(file);
    for (int i = 0; i < kNodes; i += 2) {  // half the nodes have a figure
      out << "node-" << i << ' ' << (i % 97) * 0.5 << '\n';
    }
  }
  auto p = create(NETWORK_LATENCY_SO,
                  R"({"latencyFile": ")" + file.string() + "\"}");
  if (!p->refresh().ok()) state.SkipWithError("refresh failed");
  auto the_pod = pod({});
  const auto& all = nodes();
  std::vector<schedplug_node_score> scores(all.size());
  const bool with_state = state.range(0) != 0;
  for (auto _ : state) {
    // With state: one pod_begin (one table load) for all 5000 nodes.
    // Without: every score() loads the table itself.
    const PodScope scope = p->begin_pod(the_pod->view());
    const schedplug_pod& view = with_state ? scope.pod() : the_pod->view();
    for (size_t i = 0; i < all.size(); ++i) {
      scores[i] = {all[i]->view().name, p->score(view, all[i]->view()).score};
    }
    benchmark::DoNotOptimize(p->normalize(view, scores));
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kNodes,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  std::filesystem::remove(file);
}
// Arg 1: per-pod state (pod_begin); arg 0: none, as before ABI v1.1.
BENCHMARK(BM_NetworkLatency_ScoreAndNormalize)
    ->ArgName("pod_state")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

// SCHEDPLUG_BENCH_BASELINE_SO=<file>: the same Filter benchmarks for
// another build of a plugin (SpotNodes built against an older SDK, say),
// in the same run as the others, so that before and after are measured
// side by side on the same machine state.
void register_baseline() {
  const char* file = std::getenv("SCHEDPLUG_BENCH_BASELINE_SO");
  if (file == nullptr || *file == '\0') return;
  const std::string path = file;
  benchmark::RegisterBenchmark("BM_Baseline_Filter",
                               [path](benchmark::State& state) {
                                 auto p = create(path.c_str());
                                 FilterAll(state, *p, *pod({}));
                               })
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Baseline_FilterDirect",
                               [path](benchmark::State& state) {
                                 FilterDirect(state, path.c_str(), *pod({}));
                               })
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_baseline();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
