// schedplug-host-bench: what one scheduling cycle costs the host.
//
//   BM_PreFilterHostSide/N     every native Filter (LabelFilter, ResourceFit,
//                              FreeCpu) on N nodes, on the host's thread pool
//   BM_PreFilterRoundTrip/N/E  the same through gRPC over the unix socket,
//                              with an empty delta (the table is in place),
//                              with the recent cycles behind
//                              `schedplug explain` on (E=1, the default) or
//                              off (E=0, --explain-cycles 0)
//   BM_PreFilterRoundTripShadow/N/S  the round trip while a shadow
//                              candidate runs after each answer (S=1) or
//                              not (S=0): what shadow mode costs live calls
//   BM_PreFilterRoundTripRecord/N/R  the round trip with every call
//                              recorded (R=1, --record) or not (R=0)
//   BM_RecordPreFilterCall/N   what --record adds to the live thread of one
//                              PreFilter: serializing and queueing it
//   BM_PreFilterOneNodeDelta/N the same with a one-node delta, as the shim
//                              sends it in steady state
//   BM_PreFilterMixedWindow/N/E the perf suite's Mixed cycle as the fast
//                              path serves it: the sample plugins (HwEncrypt,
//                              DedicatedNodes, NetworkLatency), a window of
//                              1500 of N nodes moving on each cycle, a
//                              one-node delta, scores ahead, the previous
//                              cycle's placement, the host's observers
//                              (metrics, and explain's recent cycles with
//                              E=1); the frame decoded and the answer
//                              encoded as the fast path does, no socket
//   BM_PreFilterMetrics/N/M    BM_PreFilterHostSideOneThread with the pod
//                              cycle's gates, and (M=1) the per-plugin
//                              metrics PreFilter observes, or (M=0) none
//   BM_ObservePreFilterMetrics the observing alone, for one such PreFilter
//   BM_StoreExplainCycle/N     what keeping recent cycles adds to one
//                              PreFilter on N nodes: its share of the cycle
//                              (every rejected node) built and stored, in a
//                              full store that drops its oldest
//   BM_StoreExplainCycleAhead/N the same for a PreFilter with scores
//                              ahead: rejections, then the raw scores of
//                              every node they let through
//   BM_PreScoreHostSide/500    three Score plugins + normalization on 500
//                              feasible nodes
//   BM_PreScoreRoundTrip/500/E the same through gRPC, explain on or off
//   BM_ApplyOneNodeDelta/N     building the node model and applying a
//                              one-node delta to an N-node table
//   BM_TableMemory/N           heap bytes of an N-node table (20 labels per
//                              node), reported as counters
// One file, one binary: the benchmarks share the plugins, thread pools and
// in-process hosts built once below, so every figure is taken on the same
// set-up.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <fstream>
#include <map>

#include <spdlog/spdlog.h>

#include "host/chain/filter_chain.hpp"
#include "host/chain/pod_cycle.hpp"
#include "host/chain/score_chain.hpp"
#include "host/convert/convert.hpp"
#include "host/explain/cycle_parts.hpp"
#include "host/explain/recent_cycles.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/pipeline/call_context.hpp"
#include "host/table/node_table.hpp"
#include "test_support.hpp"

namespace schedplug::host {
namespace {

using testing::RandomCluster;

v1::NodeTableDelta full_delta(size_t nodes, uint64_t seed = 42) {
  RandomCluster rnd(seed);
  rnd.inject_errors = false;
  v1::NodeTableDelta d;
  d.set_full(true);
  d.set_new_version(1);
  for (uint32_t i = 0; i < nodes; ++i) {
    *d.add_upserts() = rnd.node(i, "node-" + std::to_string(i), 1);
  }
  return d;
}

// A pod that LabelFilter, ResourceFit and FreeCpu all evaluate: a zone
// selector (about a quarter of the nodes match) and modest requests.
v1::Pod bench_pod() {
  v1::Pod p;
  p.set_namespace_("default");
  p.set_name("bench");
  v1::KeyValue* sel = p.add_node_selector();
  sel->set_key("topology.kubernetes.io/zone");
  sel->set_value("zone-1");
  v1::Resource* cpu = p.add_requests();
  cpu->set_name("cpu");
  cpu->set_value(500);
  v1::Resource* mem = p.add_requests();
  mem->set_name("memory");
  mem->set_value(1 << 30);
  return p;
}

// The same pod without a selector, so that scores cover every node.
v1::Pod score_pod() {
  v1::Pod p = bench_pod();
  p.clear_node_selector();
  return p;
}

struct Plugins {
  Plugins() {
    LoadResult loaded = load_plugin_directory(testing::test_plugin_dir());
    for (const auto& lib : loaded.plugins) libs[lib->name()] = lib;
    for (const char* name : {"LabelFilter", "ResourceFit", "FreeCpu"}) {
      owned.push_back(PluginInstance::create(libs.at(name), "{}"));
      filters.push_back(owned.back().get());
    }
    for (const char* name : {"FreeCpu", "Latency", "SpreadScore"}) {
      owned.push_back(PluginInstance::create(libs.at(name), "{}"));
      scorers.push_back(owned.back().get());
    }
  }
  std::map<std::string, std::shared_ptr<PluginLibrary>> libs;
  std::vector<std::unique_ptr<PluginInstance>> owned;
  std::vector<const PluginInstance*> filters, scorers;
};

Plugins& plugins() {
  static Plugins p;
  return p;
}

ThreadPool& pool() {
  static ThreadPool p(ThreadPool::default_workers());
  return p;
}

ThreadPool& single_thread() {
  static ThreadPool p(0);
  return p;
}

void BM_PreFilterHostSide(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  NodeTable table;
  table.apply(delta_from_proto(full_delta(n)));
  const PodModel pod(pod_from_proto(bench_pod()));
  size_t rejected = 0;
  for (auto _ : state) {
    FilterOutcome out = run_filters(plugins().filters, pod.view(),
                                    table.views(), pool(), Deadline::never());
    rejected = out.rejections.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes"] = static_cast<double>(n);
  state.counters["rejected"] = static_cast<double>(rejected);
  state.counters["threads"] = pool().workers() + 1;
}
// The same on the request thread alone: its CPU time is the whole work, the
// figure that does not depend on how busy the machine's other cores are.
void BM_PreFilterHostSideOneThread(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  NodeTable table;
  table.apply(delta_from_proto(full_delta(n)));
  const PodModel pod(pod_from_proto(bench_pod()));
  for (auto _ : state) {
    FilterOutcome out =
        run_filters(plugins().filters, pod.view(), table.views(),
                    single_thread(), Deadline::never());
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes"] = static_cast<double>(n);
}
BENCHMARK(BM_PreFilterHostSideOneThread)
    ->Arg(500)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_PreFilterHostSide)
    ->Arg(500)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// What the per-plugin series cost a PreFilter: the same cycle (every
// plugin's gate, then the filters on N nodes on the request thread) with
// and without counting it as the pipeline's metrics observer does
// (cycle_began, then chain_ran).
void BM_PreFilterMetrics(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const bool with_metrics = state.range(1) != 0;
  NodeTable table;
  table.apply(delta_from_proto(full_delta(n)));
  const PodData pod = pod_from_proto(bench_pod());
  std::vector<const PluginInstance*> all;
  for (const auto& p : plugins().owned) all.push_back(p.get());
  HostMetrics metrics(all);
  for (auto _ : state) {
    const PodCycle cycle("bench", std::make_unique<const PodModel>(pod), all);
    FilterOutcome out =
        run_filters(plugins().filters, cycle.pod().view(), table.views(),
                    single_thread(), Deadline::never(),
                    {.plugin_deadlines = {},
                     .applies = {},
                     .keep_raw_scores = false,
                     .cycle = &cycle});
    if (with_metrics) {
      for (const PluginRun& run : cycle.begin_runs()) metrics.hooks_ran(run);
      for (const PluginRun& run : out.runs) metrics.plugin_ran(run, "filter");
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes"] = static_cast<double>(n);
}
BENCHMARK(BM_PreFilterMetrics)
    ->ArgsProduct({{5000}, {0, 1}})
    ->ArgNames({"nodes", "metrics"})
    ->Unit(benchmark::kMicrosecond);

// The observing alone: one PreFilter's worth (the cycle's gates, then the
// three filters' runs), on series created up front.
void BM_ObservePreFilterMetrics(benchmark::State& state) {
  std::vector<const PluginInstance*> all;
  for (const auto& p : plugins().owned) all.push_back(p.get());
  HostMetrics metrics(all);
  const PodData pod = pod_from_proto(bench_pod());
  const PodCycle cycle("bench", std::make_unique<const PodModel>(pod), all);
  ChainRuns runs(plugins().filters.size());
  for (size_t p = 0; p < runs.size(); ++p) {
    runs[p].plugin = plugins().filters[p];
    runs[p].calls = 5000;
    runs[p].hooks.add(TimedHook::kFilter, std::chrono::microseconds(100));
  }
  for (auto _ : state) {
    for (const PluginRun& run : cycle.begin_runs()) metrics.hooks_ran(run);
    for (const PluginRun& run : runs) metrics.plugin_ran(run, "filter");
  }
}
BENCHMARK(BM_ObservePreFilterMetrics)->Unit(benchmark::kNanosecond);

void BM_StoreExplainCycle(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  NodeTable table;
  table.apply(delta_from_proto(full_delta(n)));
  const v1::Pod pod = bench_pod();
  const PodModel model(pod_from_proto(pod));
  const FilterOutcome outcome =
      run_filters(plugins().filters, model.view(), table.views(), pool(),
                  Deadline::never());
  ProfilePlugins profile;
  profile.scheduler_name = "default-scheduler";
  profile.filters = plugins().filters;
  RecentCycles recent;
  for (auto _ : state) {
    benchmark::DoNotOptimize(recent.add(
        "bench", true, filter_part(profile, pod, table, outcome, n)));
  }
  const RecentCycles::Stats held = recent.stats();
  state.counters["rejected"] = static_cast<double>(outcome.rejections.size());
  state.counters["held_cycles"] = static_cast<double>(held.cycles);
  state.counters["bytes_per_cycle"] =
      static_cast<double>(held.bytes) / static_cast<double>(held.cycles);
}
BENCHMARK(BM_StoreExplainCycle)
    ->Arg(500)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond);

// A PreFilter with scores ahead, as a Filter+Score profile makes it: the
// rejections part begins the cycle and the raw scores of every node it let
// through join it, in a full store that drops its oldest.
void BM_StoreExplainCycleAhead(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  NodeTable table;
  table.apply(delta_from_proto(full_delta(n)));
  const v1::Pod pod = bench_pod();
  const PodModel model(pod_from_proto(pod));
  const FilterOutcome filtered =
      run_filters(plugins().filters, model.view(), table.views(), pool(),
                  Deadline::never());
  std::vector<const schedplug_node*> feasible;
  std::vector<uint32_t> feasible_slots;
  auto rejected = filtered.rejections.begin();
  for (uint32_t slot = 0; slot < n; ++slot) {
    if (rejected != filtered.rejections.end() && rejected->node == slot) {
      ++rejected;
      continue;
    }
    feasible.push_back(table.views()[slot]);
    feasible_slots.push_back(slot);
  }
  const ScoreOutcome scored = run_scores(plugins().scorers, model.view(),
                                         feasible, pool(), Deadline::never(),
                                         {.plugin_deadlines = {},
                                          .applies = {},
                                          .keep_raw_scores = true,
                                          .raw_scores = true});
  ProfilePlugins profile;
  profile.scheduler_name = "default-scheduler";
  profile.filters = plugins().filters;
  profile.scorers = plugins().scorers;
  const std::vector<int> weights;
  RecentCycles recent;
  for (auto _ : state) {
    recent.add("bench", true, filter_part(profile, pod, table, filtered, n));
    CycleSummary ahead =
        score_part(profile, weights, pod, table, feasible_slots, scored);
    mark_ahead(profile, scored, ahead);
    benchmark::DoNotOptimize(recent.add("bench", false, std::move(ahead)));
  }
  const RecentCycles::Stats held = recent.stats();
  state.counters["rejected"] = static_cast<double>(filtered.rejections.size());
  state.counters["scored"] = static_cast<double>(feasible.size());
  state.counters["held_cycles"] = static_cast<double>(held.cycles);
}
BENCHMARK(BM_StoreExplainCycleAhead)
    ->Arg(500)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond);

void BM_PreScoreHostSide(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  NodeTable table;
  table.apply(delta_from_proto(full_delta(5000)));
  std::vector<const schedplug_node*> nodes;
  for (size_t i = 0; i < n; ++i) nodes.push_back(table.views()[i * (5000 / n)]);
  const PodModel pod(pod_from_proto(score_pod()));
  for (auto _ : state) {
    ScoreOutcome out = run_scores(plugins().scorers, pod.view(), nodes, pool(),
                                  Deadline::never());
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes"] = static_cast<double>(n);
}
BENCHMARK(BM_PreScoreHostSide)
    ->Arg(500)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_ApplyOneNodeDelta(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  NodeTable table;
  table.apply(delta_from_proto(full_delta(n)));
  RandomCluster rnd(9);
  uint64_t version = table.version();
  int64_t generation = 1;
  for (auto _ : state) {
    state.PauseTiming();
    v1::NodeTableDelta d;
    d.set_base_version(version);
    d.set_new_version(version + 1);
    const uint32_t slot = static_cast<uint32_t>(version % n);
    *d.add_upserts() =
        rnd.node(slot, "node-" + std::to_string(slot), ++generation);
    state.ResumeTiming();
    table.apply(delta_from_proto(d));
    ++version;
  }
  state.counters["nodes"] = static_cast<double>(n);
}
BENCHMARK(BM_ApplyOneNodeDelta)
    ->Arg(500)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond);

void BM_TableMemory(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const v1::NodeTableDelta delta = full_delta(n);
  size_t bytes = 0;
  for (auto _ : state) {
    const size_t before = mallinfo2().uordblks;
    auto table = std::make_unique<NodeTable>();
    table->apply(delta_from_proto(delta));
    bytes = mallinfo2().uordblks - before;
    benchmark::DoNotOptimize(table);
  }
  state.counters["table_MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.counters["bytes_per_node"] =
      static_cast<double>(bytes) / static_cast<double>(n);
  state.counters["proto_MiB"] =
      static_cast<double>(delta.ByteSizeLong()) / (1 << 20);
}
BENCHMARK(BM_TableMemory)
    ->Arg(5000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// One host for the round-trip benchmarks, with a session per table size.
// `explain`: with the recent cycles behind Explain (the host's default).
// `shadow`: FreeCpu runs a shadow candidate (another load of itself).
// `record_dir`: every call is recorded there (--record).
struct Host {
  explicit Host(bool explain, bool shadow = false,
                std::filesystem::path record_dir = {})
      : host(
            [explain, record_dir](HostOptions& o) {
              o.max_message_bytes = 256 << 20;
              if (!explain) o.service.recent_cycles.max_cycles = 0;
              o.record.dir = record_dir;
            },
            {.shadow_free_cpu = shadow}) {}
  testing::RunningHost host;
  std::map<size_t, std::string> sessions;

  const std::string& session_with(size_t nodes) {
    auto it = sessions.find(nodes);
    if (it != sessions.end()) return it->second;
    const std::string session = host.handshake();
    v1::PreFilterRequest request;
    request.set_session_id(session);
    request.set_scheduler_name("default-scheduler");
    *request.mutable_pod() = bench_pod();
    *request.mutable_delta() = full_delta(nodes);
    grpc::ClientContext context;
    v1::PreFilterResponse response;
    const grpc::Status s = host.stub().PreFilter(&context, request, &response);
    if (!s.ok()) throw std::runtime_error(s.error_message());
    return sessions.emplace(nodes, session).first->second;
  }
};

// `explain`: with the recent cycles (the host's default).
Host& host(bool explain = true) {
  static Host on(true);
  static Host off(false);
  return explain ? on : off;
}

// With FreeCpu's shadow candidate (and the recent cycles).
Host& shadow_host() {
  static Host shadowed(true, true);
  return shadowed;
}

// Recording every call (--record) into a directory of its own.
Host& recording_host() {
  static testing::TempDir dir;
  static Host recording(true, false, dir.path());
  return recording;
}

// Back-to-back PreFilters of one pod over `n` nodes on `h`, the table
// unchanged; the last answer's size in `bytes`.
void pre_filter_round_trips(benchmark::State& state, Host& h, size_t n,
                            size_t& bytes) {
  v1::PreFilterRequest request;
  request.set_session_id(h.session_with(n));
  request.set_scheduler_name("default-scheduler");
  *request.mutable_pod() = bench_pod();
  request.mutable_delta()->set_base_version(1);
  for (auto _ : state) {
    grpc::ClientContext context;
    v1::PreFilterResponse response;
    const grpc::Status s =
        h.host.stub().PreFilter(&context, request, &response);
    if (!s.ok()) {
      state.SkipWithError(s.error_message().c_str());
      break;
    }
    bytes = response.ByteSizeLong();
  }
  state.counters["nodes"] = static_cast<double>(n);
}

void BM_PreFilterRoundTrip(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  size_t bytes = 0;
  pre_filter_round_trips(state, host(state.range(1) != 0), n, bytes);
  state.counters["response_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_PreFilterRoundTrip)
    ->ArgsProduct({{500, 5000}, {1, 0}})
    ->ArgNames({"nodes", "explain"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The live PreFilter's round trip while a shadow candidate runs after
// each answer (shadow:1) and without one (shadow:0): what shadow mode
// costs the live path, the copy of the evaluated nodes included.
void BM_PreFilterRoundTripShadow(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Host& h = state.range(1) != 0 ? shadow_host() : host();
  size_t bytes = 0;
  pre_filter_round_trips(state, h, n, bytes);
  if (state.range(1) != 0) {
    const std::string text = h.host.app().metrics().text();
    const auto at = text.find("\nschedplug_shadow_dropped_total ");
    state.counters["shadow_dropped"] =
        at == std::string::npos ? 0 : std::stod(text.substr(at + 32));
  }
}
BENCHMARK(BM_PreFilterRoundTripShadow)
    ->ArgsProduct({{500, 5000}, {0, 1}})
    ->ArgNames({"nodes", "shadow"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The live PreFilter's round trip with every call recorded (record:1) and
// without (record:0): what --record costs the live path, and the
// compressed bytes it writes per call.
void BM_PreFilterRoundTripRecord(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Host& h = state.range(1) != 0 ? recording_host() : host();
  size_t bytes = 0;
  CycleRecorder* recorder = h.host.app().recorder();
  const RecorderStats before = recorder ? recorder->stats() : RecorderStats{};
  pre_filter_round_trips(state, h, n, bytes);
  if (recorder != nullptr) {
    recorder->flush();
    const RecorderStats after = recorder->stats();
    const double calls = static_cast<double>(after.calls - before.calls);
    state.counters["record_bytes_per_call"] =
        calls > 0 ? static_cast<double>(after.bytes - before.bytes) / calls : 0;
    state.counters["record_dropped"] =
        static_cast<double>(after.dropped - before.dropped);
  }
}
BENCHMARK(BM_PreFilterRoundTripRecord)
    ->ArgsProduct({{500, 5000}, {0, 1}})
    ->ArgNames({"nodes", "record"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// What --record adds to the live thread of one PreFilter: serializing the
// request and the answer of `n` nodes and queueing them (the writer thread
// compresses and writes them meanwhile, off the call).
void BM_RecordPreFilterCall(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Host& h = host();
  v1::PreFilterRequest request;
  request.set_session_id(h.session_with(n));
  request.set_scheduler_name("default-scheduler");
  *request.mutable_pod() = bench_pod();
  request.mutable_delta()->set_base_version(1);
  v1::PreFilterResponse response;
  {
    grpc::ClientContext context;
    const grpc::Status s =
        h.host.stub().PreFilter(&context, request, &response);
    if (!s.ok()) {
      state.SkipWithError(s.error_message().c_str());
      return;
    }
  }
  testing::TempDir dir;
  CycleRecorder recorder({.dir = dir.path()}, nullptr);
  size_t since_flush = 0;
  for (auto _ : state) {
    recorder.call(v1::RECORDED_METHOD_PRE_FILTER, request.session_id(), request,
                  response, grpc::Status::OK, 1, static_cast<uint32_t>(n),
                  std::chrono::microseconds(100), &request.delta());
    if (++since_flush == 256) {
      // Untimed: the writer catches up, so no call is left out (a loop of
      // back-to-back calls outruns any compressor).
      state.PauseTiming();
      recorder.flush();
      since_flush = 0;
      state.ResumeTiming();
    }
  }
  recorder.flush();
  const RecorderStats stats = recorder.stats();
  state.counters["response_bytes"] =
      static_cast<double>(response.ByteSizeLong());
  state.counters["record_bytes_per_call"] =
      stats.calls > 0
          ? static_cast<double>(stats.bytes) / static_cast<double>(stats.calls)
          : 0;
  state.counters["dropped"] = static_cast<double>(stats.dropped);
}
BENCHMARK(BM_RecordPreFilterCall)
    ->Arg(500)
    ->Arg(5000)
    ->ArgName("nodes")
    ->Unit(benchmark::kMicrosecond);

void BM_PreFilterOneNodeDelta(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::string session = host().session_with(n + 1);  // its own table
  RandomCluster rnd(3);
  // The benchmark function runs several times on the same session: keep
  // the table version across runs, as the shim would.
  static std::map<size_t, uint64_t> versions;
  uint64_t& version = versions.try_emplace(n, 1).first->second;
  int64_t generation = static_cast<int64_t>(version) + 1;
  for (auto _ : state) {
    state.PauseTiming();
    v1::PreFilterRequest request;
    request.set_session_id(session);
    request.set_scheduler_name("default-scheduler");
    *request.mutable_pod() = bench_pod();
    request.mutable_delta()->set_base_version(version);
    request.mutable_delta()->set_new_version(version + 1);
    const uint32_t slot = static_cast<uint32_t>(version % n);
    *request.mutable_delta()->add_upserts() =
        rnd.node(slot, "node-" + std::to_string(slot), ++generation);
    state.ResumeTiming();
    grpc::ClientContext context;
    v1::PreFilterResponse response;
    const grpc::Status s =
        host().host.stub().PreFilter(&context, request, &response);
    if (!s.ok()) {
      state.SkipWithError(s.error_message().c_str());
      break;
    }
    ++version;
  }
  state.counters["nodes"] = static_cast<double>(n);
}
BENCHMARK(BM_PreFilterOneNodeDelta)
    ->Arg(500)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// A host serving the perf suite's Mixed profile from the sample plugins,
// called in-process as the fast path calls it.
struct MixedHost {
  explicit MixedHost(bool explain)
      : host([this, explain](HostOptions& o) {
          o.config = write_config();
          o.plugins = SCHEDPLUG_SAMPLE_PLUGIN_DIR;
          o.max_message_bytes = 256 << 20;
          o.watch = false;
          if (!explain) o.service.recent_cycles.max_cycles = 0;
        }) {
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    request.set_client_id("bench");
    v1::ProfilePlugins* profile = request.add_profiles();
    profile->set_scheduler_name("default-scheduler");
    for (const char* name : {"HwEncrypt", "DedicatedNodes", "NetworkLatency"})
      profile->add_plugins(name);
    v1::HandshakeResponse response;
    const grpc::Status s =
        host.app().pipeline().handshake(request, response, "");
    if (!s.ok()) throw std::runtime_error(s.error_message());
    session = response.session_id();
  }

  std::filesystem::path write_config() {
    const auto latency = dir.path() / "latency.txt";
    std::ofstream(latency) << "node-a 12.5\nnode-b 3\n";
    const auto file = dir.path() / "mixed.yaml";
    std::ofstream(file) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: DedicatedNodes
          - name: NetworkLatency
    pluginConfig:
      - name: NetworkLatency
        args:
          latencyFile: )"
                        << latency.string() << "\n";
    return file;
  }

  testing::TempDir dir;
  testing::RunningHost host;
  std::string session;
};

// The Mixed workload's nodes: half with hardware encryption, a tenth
// dedicated.
v1::Node mixed_node(RandomCluster& rnd, uint32_t slot, int64_t generation) {
  v1::Node node = rnd.node(slot, "node-" + std::to_string(slot), generation);
  v1::KeyValue* hw = node.add_labels();
  hw->set_key("node.kubernetes.io/hw-encrypt");
  hw->set_value(slot % 2 == 0 ? "true" : "false");
  if (slot % 10 == 0) {
    v1::KeyValue* dedicated = node.add_labels();
    dedicated->set_key("schedplug.io/dedicated");
    dedicated->set_value("true");
  }
  return node;
}

// Most of the Mixed workload's pods: no annotation, so HwEncrypt's gate
// is shut and DedicatedNodes rejects the dedicated nodes.
v1::Pod mixed_pod(uint64_t i) {
  v1::Pod p = score_pod();
  p.set_namespace_("measure");
  p.set_name("pod-" + std::to_string(i));
  p.set_uid("uid-" + std::to_string(i));
  v1::KeyValue* app = p.add_labels();
  app->set_key("app");
  app->set_value("mixed");
  return p;
}

// A MixedHost with an `n`-node table, uploaded once, and where its cycles
// are: the benchmark runs its function several times on the same table.
struct MixedTable {
  MixedTable(bool explain, uint32_t n) : host(explain), nodes(n) {
    RandomCluster rnd(7);
    rnd.inject_errors = false;
    for (uint32_t i = 0; i < n; ++i) nodes[i] = mixed_node(rnd, i, 1);
    v1::PreFilterRequest request;
    request.set_session_id(host.session);
    request.set_scheduler_name("default-scheduler");
    *request.mutable_pod() = mixed_pod(0);
    v1::NodeTableDelta& d = *request.mutable_delta();
    d.set_full(true);
    d.set_new_version(version);
    for (const v1::Node& node : nodes) *d.add_upserts() = node;
    v1::PreFilterResponse response;
    InProcessCallContext context;
    const grpc::Status s =
        host.host.app().pipeline().pre_filter(context, request, response);
    if (!s.ok()) throw std::runtime_error(s.error_message());
  }
  MixedHost host;
  std::vector<v1::Node> nodes;
  uint64_t version = 1;
  uint32_t start = 0;
  uint64_t pod = 1;
  int64_t generation = 1;
  uint32_t last_ahead = 0;  // the previous answer's scores ahead
};

void BM_PreFilterMixedWindow(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<MixedTable>>
      tables;
  auto& t = tables[{state.range(0), state.range(1)}];
  if (!t) t = std::make_unique<MixedTable>(state.range(1) != 0, n);
  CallPipeline& pipeline = t->host.host.app().pipeline();
  // kube-scheduler's Filter starts where the previous cycle stopped and
  // visits about 600 nodes to find its 500 feasible ones at 5000 nodes;
  // the shim's window covers them with a margin.
  constexpr uint32_t kWindow = 1500, kStep = 600;
  const uint32_t window = std::min(kWindow, n);
  std::string frame, answer;
  v1::FastRequest next, request;
  v1::FastResponse response;
  size_t rejected = 0;
  for (auto _ : state) {
    state.PauseTiming();
    {
      next.Clear();
      v1::PreFilterRequest& r = *next.mutable_pre_filter();
      r.set_session_id(t->host.session);
      r.set_scheduler_name("default-scheduler");
      *r.mutable_pod() = mixed_pod(t->pod);
      r.set_score_ahead(true);
      const uint32_t end = t->start + window;
      if (end > n) {
        r.add_evaluate(0);
        r.add_evaluate(end - n);
      }
      r.add_evaluate(t->start);
      r.add_evaluate(std::min(end, n));
      // The previous pod went to the window's first node: that node's
      // pods changed, and the shim says where the pod went and which of
      // the scores ahead kube-scheduler normalized (its 500 feasible
      // nodes).
      v1::NodeTableDelta& d = *r.mutable_delta();
      d.set_base_version(t->version);
      d.set_new_version(t->version + 1);
      v1::Node& node = *d.add_upserts();
      node = t->nodes[t->start];
      node.set_generation(++t->generation);
      v1::Placement& placed = *r.add_placed();
      placed.set_pod_uid("uid-" + std::to_string(t->pod - 1));
      placed.set_node(node.name());
      for (uint32_t k = 0; k < std::min(t->last_ahead, 500u); ++k)
        placed.add_scored(k);
      frame.clear();
      next.AppendToString(&frame);
      t->start = (t->start + kStep) % n;
      ++t->pod;
      ++t->version;
    }
    state.ResumeTiming();
    // As the fast path's connection thread: decode, call, encode.
    response.Clear();
    if (!request.ParseFromString(frame)) {
      state.SkipWithError("the frame does not parse");
      break;
    }
    InProcessCallContext context;
    const grpc::Status s = pipeline.pre_filter(context, request.pre_filter(),
                                               *response.mutable_pre_filter());
    if (!s.ok()) {
      state.SkipWithError(s.error_message().c_str());
      break;
    }
    answer.assign(4, '\0');
    response.AppendToString(&answer);
    t->last_ahead = static_cast<uint32_t>(
        response.pre_filter().scores_ahead().nodes_size());
    rejected = static_cast<size_t>(response.pre_filter().rejected_nodes_size());
  }
  state.counters["evaluated"] = window;
  state.counters["rejected"] = static_cast<double>(rejected);
  state.counters["scored_ahead"] = t->last_ahead;
  state.counters["answer_bytes"] = static_cast<double>(answer.size());
}
BENCHMARK(BM_PreFilterMixedWindow)
    ->ArgsProduct({{5000}, {1, 0}})
    ->ArgNames({"nodes", "explain"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_PreScoreRoundTrip(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Host& h = host(state.range(1) != 0);
  v1::PreScoreRequest request;
  request.set_session_id(h.session_with(5000));
  request.set_scheduler_name("default-scheduler");
  *request.mutable_pod() = score_pod();
  request.set_table_version(1);
  for (size_t i = 0; i < n; ++i)
    request.add_nodes(static_cast<uint32_t>(i * (5000 / n)));
  for (auto _ : state) {
    grpc::ClientContext context;
    v1::PreScoreResponse response;
    const grpc::Status s = h.host.stub().PreScore(&context, request, &response);
    if (!s.ok()) {
      state.SkipWithError(s.error_message().c_str());
      break;
    }
  }
  state.counters["nodes"] = static_cast<double>(n);
}
BENCHMARK(BM_PreScoreRoundTrip)
    ->ArgsProduct({{500}, {1, 0}})
    ->ArgNames({"nodes", "explain"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace schedplug::host

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
