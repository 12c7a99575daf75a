// Record and replay (host/record/): a host started with --record writes
// every pod call as asked and as answered; replay re-evaluates the files
// with other plugin builds through a host of its own. The same build gives
// no difference; Reloadable v2 (with its Score: reloadable_v6) rejects
// every node for pods labelled reload/picky=yes and scores the other way
// round for them, so exactly those pods change, in feasible set and best
// node. Any one file replays alone, a file cut short replays up to its
// last whole entry, and the size cap removes the oldest files. A recording
// is input like any other: replay checks every index it holds and never
// loads code from outside --plugins (a hostile recording, below).
// One file: each case records with a host of its own and replays the files, so
// recording and replay share the fixtures (plugin versions, profile) below.
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "host/loader/plugin_file_check.hpp"
#include "host/record/cycle_recorder.hpp"
#include "host/record/record_file.hpp"
#include "host/record/replayer.hpp"
#include "host/record/table_mirror.hpp"
#include "host/table/node_table.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

constexpr char kProfile[] = "record-scheduler";
constexpr uint32_t kNodes = 10;

std::filesystem::path version_file(int v) {
  return std::filesystem::path(SCHEDPLUG_RELOADABLE_DIR) /
         ("reloadable_v" + std::to_string(v) + ".so");
}

class RecordReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.path() / "config.yaml";
    std::ofstream(config_) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "profiles:\n"
                              "  - schedulerName: record-scheduler\n"
                              "    plugins:\n"
                              "      multiPoint:\n"
                              "        enabled:\n"
                              "          - name: Reloadable\n";
    record_ = dir_.path() / "record";
    std::filesystem::create_directories(record_);
    same_ = plugin_dir("same", 5);        // v1 with its Score: the live build
    changed_ = plugin_dir("changed", 6);  // v2 with its Score
  }

  std::filesystem::path plugin_dir(const std::string& name, int version) {
    const auto dir = dir_.path() / name;
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(version_file(version), dir / "reloadable.so");
    return dir;
  }

  // Runs `pods` cycles (PreFilter, then PreScore on the nodes that
  // passed) on a host recording into record_; every 7th pod is picky.
  // Every 10th pod's delta changes a node, and one node leaves and comes
  // back, so the recorded table moves. Returns the picky pods' count.
  // `plugins`: the live builds (default same_); `before_pod(host, i)` runs
  // before pod i's cycle (a hot reload, say); when `placed(i)` says so,
  // the next PreFilter tells the host, as the shim does, that pod i went
  // to node-1 (else it stayed Pending).
  struct RecordOptions {
    std::filesystem::path plugins;
    std::function<void(RunningHost&, int)> before_pod;
    std::function<bool(int)> placed;
  };
  int record(int pods, uint64_t file_bytes = uint64_t{64} << 20,
             uint64_t max_bytes = uint64_t{4} << 30,
             const RecordOptions& more = {}) {
    int picky = 0;
    RunningHost host([&](HostOptions& o) {
      o.config = config_;
      o.plugins = more.plugins.empty() ? same_ : more.plugins;
      o.watch = false;
      o.record.dir = record_;
      o.record.file_bytes = file_bytes;
      o.record.max_bytes = max_bytes;
    });
    v1::HandshakeRequest hello;
    hello.set_protocol_version(v1::PROTOCOL_VERSION_1);
    hello.set_client_id("record-test");
    v1::ProfilePlugins* p = hello.add_profiles();
    p->set_scheduler_name(kProfile);
    p->add_plugins("Reloadable");
    v1::HandshakeResponse welcome;
    {
      grpc::ClientContext context;
      const grpc::Status s = host.stub().Handshake(&context, hello, &welcome);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    uint64_t version = 0;
    for (int i = 0; i < pods; ++i) {
      if (more.before_pod) more.before_pod(host, i);
      const bool is_picky = i % 7 == 3;
      picky += is_picky;
      v1::Pod pod;
      pod.set_namespace_("default");
      pod.set_name("pod-" + std::to_string(i));
      pod.set_uid("uid-" + std::to_string(i));
      if (is_picky) {
        v1::KeyValue* kv = pod.add_labels();
        kv->set_key("reload/picky");
        kv->set_value("yes");
      }
      v1::PreFilterRequest request;
      request.set_session_id(welcome.session_id());
      request.set_scheduler_name(kProfile);
      *request.mutable_pod() = pod;
      if (more.placed && i > 0 && more.placed(i - 1)) {
        v1::Placement* placed = request.add_placed();
        placed->set_pod_uid("uid-" + std::to_string(i - 1));
        placed->set_node("node-1");
      }
      v1::NodeTableDelta* delta = request.mutable_delta();
      delta->set_base_version(version);
      if (version == 0) {
        delta->set_full(true);
        for (uint32_t slot = 0; slot < kNodes; ++slot)
          *delta->add_upserts() = node(slot, 1);
        delta->set_new_version(++version);
      } else if (i % 10 == 0) {
        *delta->add_upserts() = node(static_cast<uint32_t>(i / 10) % kNodes, i);
        delta->set_new_version(++version);
      } else if (i % 25 == 0) {
        delta->add_removed(kNodes - 1);
        delta->set_new_version(++version);
      } else if (i % 25 == 1) {
        *delta->add_upserts() = node(kNodes - 1, i);
        delta->set_new_version(++version);
      } else {
        delta->set_new_version(version);
      }
      v1::PreFilterResponse filtered;
      {
        grpc::ClientContext context;
        const grpc::Status s =
            host.stub().PreFilter(&context, request, &filtered);
        EXPECT_TRUE(s.ok()) << s.error_message();
      }
      std::set<uint32_t> rejected(filtered.rejected_nodes().begin(),
                                  filtered.rejected_nodes().end());
      v1::PreScoreRequest score;
      score.set_session_id(welcome.session_id());
      score.set_scheduler_name(kProfile);
      *score.mutable_pod() = pod;
      score.set_table_version(version);
      const bool gone = i % 25 == 0 && i > 0;  // node kNodes-1 left
      for (uint32_t slot = 0; slot < kNodes; ++slot) {
        if (!rejected.contains(slot) && !(gone && slot == kNodes - 1))
          score.add_nodes(slot);
      }
      v1::PreScoreResponse scored;
      grpc::ClientContext context;
      const grpc::Status s = host.stub().PreScore(&context, score, &scored);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    host.app().recorder()->flush();
    stats_ = host.app().recorder()->stats();
    metrics_ = host.app().metrics().text();
    return picky;
  }

  static v1::Node node(uint32_t slot, int64_t generation) {
    v1::Node n;
    n.set_index(slot);
    n.set_name("node-" + std::to_string(slot));
    n.set_generation(generation);
    return n;
  }

  ReplayReport replay(const std::filesystem::path& record,
                      const std::filesystem::path& plugins,
                      std::ostream* diagnostics = nullptr) {
    std::ostringstream ignored;
    ReplayOptions options;
    options.record = record;
    options.plugins = plugins;
    options.workers = 1;
    return replay_recording(options,
                            diagnostics != nullptr ? *diagnostics : ignored);
  }

  // The only file of record_, entry by entry.
  std::vector<v1::RecordEntry> recorded_entries() {
    const auto files = record_files(record_);
    EXPECT_EQ(files.size(), 1u);
    std::vector<v1::RecordEntry> out;
    if (files.empty()) return out;
    RecordFileReader reader(files[0]);
    for (v1::RecordEntry e; reader.next(e);) out.push_back(e);
    EXPECT_FALSE(reader.truncated());
    return out;
  }

  // A recording of `entries` alone, in a directory of its own.
  std::filesystem::path write_recording(
      const std::string& name, const std::vector<v1::RecordEntry>& entries,
      uint64_t sequence = 1) {
    const auto dir = dir_.path() / name;
    std::filesystem::create_directories(dir);
    RecordFileWriter writer(dir / record_file_name(sequence));
    for (const v1::RecordEntry& e : entries) writer.write(e);
    writer.close();
    return dir;
  }

  // `entries` with a PreFilter of pod default/hostile inserted after the
  // first pod's cycle (PreFilter and PreScore), carrying `delta` and
  // recorded as having moved the table to its version.
  static std::vector<v1::RecordEntry> with_hostile_call(
      std::vector<v1::RecordEntry> entries, const v1::NodeTableDelta& delta) {
    std::string session;
    int calls = 0;
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (!it->has_call()) continue;
      if (session.empty()) {
        v1::PreFilterRequest first;
        EXPECT_TRUE(first.ParseFromString(it->call().request()));
        session = first.session_id();
      }
      if (++calls < 2) continue;
      v1::PreFilterRequest request;
      request.set_session_id(session);
      request.set_scheduler_name(kProfile);
      request.mutable_pod()->set_namespace_("default");
      request.mutable_pod()->set_name("hostile");
      request.mutable_pod()->set_uid("uid-hostile");
      *request.mutable_delta() = delta;
      v1::RecordEntry hostile;
      v1::RecordedCall* c = hostile.mutable_call();
      c->set_method(v1::RECORDED_METHOD_PRE_FILTER);
      c->set_table_version(delta.new_version());
      c->set_table_nodes(kNodes);
      request.SerializeToString(c->mutable_request());
      v1::PreFilterResponse().SerializeToString(c->mutable_response());
      entries.insert(it + 1, hostile);
      return entries;
    }
    ADD_FAILURE() << "the recording has fewer than two calls";
    return entries;
  }

  TempDir dir_;
  std::filesystem::path config_, record_, same_, changed_;
  RecorderStats stats_;
  std::string metrics_;
};

TEST_F(RecordReplay, SameBuildsGiveNoDifferenceAndAChangedOneExactlyItsPods) {
  constexpr int kPods = 300;
  const int picky = record(kPods, /*file_bytes=*/8 << 10);
  EXPECT_EQ(stats_.calls, 2u * kPods);
  EXPECT_EQ(stats_.dropped, 0u);
  EXPECT_GE(stats_.files, 2u) << "8 KiB files should rotate";
  EXPECT_NE(metrics_.find("schedplug_record_calls_total " +
                          std::to_string(2 * kPods)),
            std::string::npos)
      << metrics_;
  std::printf(
      "[ recorded ] %d cycles in %llu files, %llu bytes: %.0f bytes "
      "per cycle\n",
      kPods, static_cast<unsigned long long>(stats_.files),
      static_cast<unsigned long long>(stats_.bytes),
      static_cast<double>(stats_.bytes) / kPods);

  const ReplayReport same = replay(record_, same_);
  EXPECT_EQ(same.files, stats_.files);
  EXPECT_EQ(same.cycles, static_cast<uint64_t>(kPods));
  EXPECT_EQ(same.pods, static_cast<uint64_t>(kPods));
  EXPECT_EQ(same.calls, 2u * kPods);
  EXPECT_FALSE(same.differs());
  EXPECT_EQ(same.reasons_changed, 0u);
  EXPECT_EQ(same.skipped_unknown_session + same.skipped_failed, 0u);
  for (const auto& d : same.examples)
    ADD_FAILURE() << d.pod << ": " << d.detail;

  const ReplayReport changed = replay(record_, changed_);
  EXPECT_TRUE(changed.differs());
  EXPECT_EQ(changed.feasible_changed, static_cast<uint64_t>(picky));
  EXPECT_EQ(changed.best_node_changed, static_cast<uint64_t>(picky));
  EXPECT_EQ(changed.new_errors, 0u);
  ASSERT_FALSE(changed.examples.empty());
  EXPECT_EQ(changed.examples.front().pod, "default/pod-3");
  EXPECT_NE(changed.examples.front().detail.find(
                "node-0 passed in the recording, rejected by Reloadable"),
            std::string::npos)
      << changed.examples.front().detail;

  // Each file alone: its checkpoint brings the table, so nothing differs.
  uint64_t cycles = 0;
  for (const auto& file : record_files(record_)) {
    const ReplayReport alone = replay(file, same_);
    EXPECT_FALSE(alone.differs()) << file;
    EXPECT_EQ(alone.skipped_unknown_session, 0u) << file;
    cycles += alone.cycles;
  }
  EXPECT_EQ(cycles, static_cast<uint64_t>(kPods));
}

// What the report tells an operator: a hot reload of the recorded host's
// plugins inside the recording is a note naming the builds (as a reload of
// its configuration is); --examples counts pods, each with its first
// difference of each kind; a pod's changed top-ranked node is worded as a
// ranking, with where kube-scheduler placed the pod, or that no placement
// was recorded for it (a pod that stayed Pending).
TEST_F(RecordReplay, TheReportNamesHotReloadsCountsExamplesByPodAndRanks) {
  // v1 live until pod 30, then v2 by a hot reload. kube-scheduler placed
  // every pod but the picky pods 3 and 17 (Pending: say its own filters
  // turned them down).
  const auto live = plugin_dir("live", 5);
  const std::string v1_sha = file_sha256(live / "reloadable.so");
  const std::string v2_sha = file_sha256(version_file(6));
  const int picky =
      record(60, uint64_t{64} << 20, uint64_t{4} << 30,
             {.plugins = live,
              .before_pod =
                  [&](RunningHost& host, int i) {
                    if (i != 30) return;
                    const auto next = live / "next.so.tmp";
                    std::filesystem::copy_file(version_file(6), next);
                    std::filesystem::rename(next, live / "reloadable.so");
                    EXPECT_TRUE(host.app().reload().swapped);
                  },
              .placed = [](int i) { return i != 3 && i != 17; }});
  ASSERT_EQ(picky, 9);

  ReplayOptions options;
  options.record = record_;
  options.plugins = changed_;
  options.workers = 1;
  options.max_examples = 3;
  std::ostringstream ignored;
  const ReplayReport r = replay_recording(options, ignored);
  const std::string reload =
      "the recorded host ran other plugin builds from here on (a hot "
      "reload: Reloadable 1.0.0 (sha256 " +
      v1_sha.substr(0, 12) + ") became 2.0.0 (sha256 " + v2_sha.substr(0, 12) +
      ")); the replay runs the plugins in " + changed_.string() + " throughout";
  ASSERT_EQ(r.notes.size(), 1u) << ::testing::PrintToString(r.notes);
  EXPECT_NE(r.notes[0].find(reload), std::string::npos) << r.notes[0];

  // v2 differs from the recording on the picky pods before the reload
  // (after it, the recording is v2's): 4 pods, 3 of them as examples, each
  // with both of its kinds.
  EXPECT_EQ(r.differing_pods, 4u);
  EXPECT_EQ(r.example_pods, 3u);
  std::map<std::string, std::vector<std::string>> kinds;
  for (const ReplayDifference& d : r.examples) kinds[d.pod].push_back(d.kind);
  const std::vector<std::string> both{"feasible", "best_node"};
  EXPECT_EQ(kinds, (std::map<std::string, std::vector<std::string>>{
                       {"default/pod-3", both},
                       {"default/pod-10", both},
                       {"default/pod-17", both}}));
  for (const ReplayDifference& d : r.examples) {
    if (d.kind != "best_node") continue;
    EXPECT_EQ(d.detail.find("the native scores rank "), 0u) << d.detail;
    const std::string where =
        d.pod == "default/pod-10"
            ? "; kube-scheduler placed the pod on node-1"
            : "; no placement of the pod was recorded (it stayed Pending, or "
              "the recording ends first)";
    EXPECT_NE(d.detail.find(where), std::string::npos) << d.detail;
  }
}

TEST_F(RecordReplay, AFileCutShortReplaysUpToItsLastWholeEntry) {
  record(100);
  const auto files = record_files(record_);
  ASSERT_EQ(files.size(), 1u);
  const auto size = std::filesystem::file_size(files[0]);
  std::filesystem::resize_file(files[0], size * 2 / 3);
  const ReplayReport report = replay(record_, same_);
  EXPECT_FALSE(report.differs());
  EXPECT_GT(report.cycles, 0u);
  EXPECT_LT(report.cycles, 100u);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("ends early"), std::string::npos)
      << report.notes[0];
}

TEST_F(RecordReplay, TheSizeCapRemovesTheOldestFilesAndTheRestReplay) {
  record(1500, /*file_bytes=*/8 << 10, /*max_bytes=*/kMinRecordMaxBytes);
  EXPECT_GT(stats_.removed, 0u);
  const auto files = record_files(record_);
  ASSERT_FALSE(files.empty());
  EXPECT_NE(files.front().filename().string(), record_file_name(1));
  const ReplayReport report = replay(record_, same_);
  EXPECT_FALSE(report.differs());
  EXPECT_GT(report.cycles, 0u);
  EXPECT_EQ(report.skipped_unknown_session, 0u);
}

// The hooks of plugins that own a resource (Reserve, Unreserve, Permit,
// PreBind, PreEnqueue) are recorded with the cycle's calls and replayed in
// their order, so that such a plugin holds in the replay what it held
// when recorded; a hook that answers otherwise is a "hook" difference
// naming the call, the node and both answers.
TEST_F(RecordReplay, HookCallsAreRecordedAndReplayedInOrder) {
  const auto config = dir_.path() / "hooks.yaml";
  const auto log = dir_.path() / "hooks.log";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "profiles:\n"
                           "  - schedulerName: hooks-scheduler\n"
                           "    plugins:\n"
                           "      multiPoint:\n"
                           "        enabled:\n"
                           "          - name: HookA\n"
                           "          - name: HookB\n"
                           "    pluginConfig:\n"
                           "      - name: HookA\n"
                           "        args:\n"
                           "          log_file: \""
                        << log.string()
                        << "\"\n"
                           "      - name: HookB\n"
                           "        args:\n"
                           "          log_file: \""
                        << log.string() << "\"\n";
  {
    RunningHost host([&](HostOptions& o) {
      o.config = config;
      o.plugins = SCHEDPLUG_HOOK_PLUGIN_DIR;
      o.watch = false;
      o.record.dir = record_;
    });
    v1::HandshakeRequest hello;
    hello.set_protocol_version(v1::PROTOCOL_VERSION_1);
    hello.set_client_id("record-hooks-test");
    v1::ProfilePlugins* profile = hello.add_profiles();
    profile->set_scheduler_name("hooks-scheduler");
    profile->add_plugins("HookA");
    profile->add_plugins("HookB");
    v1::HandshakeResponse welcome;
    {
      grpc::ClientContext c;
      ASSERT_TRUE(host.stub().Handshake(&c, hello, &welcome).ok());
    }
    v1::PreFilterRequest pf;
    pf.set_session_id(welcome.session_id());
    pf.set_scheduler_name("hooks-scheduler");
    *pf.mutable_pod() = labelled_pod("setup");
    pf.mutable_delta()->set_full(true);
    pf.mutable_delta()->set_new_version(1);
    *pf.mutable_delta()->add_upserts() = node(0, 1);
    {
      v1::PreFilterResponse r;
      grpc::ClientContext c;
      ASSERT_TRUE(host.stub().PreFilter(&c, pf, &r).ok());
    }
    const auto at = [&](const v1::Pod& p) {
      v1::PodAtNodeRequest r;
      r.set_session_id(welcome.session_id());
      r.set_scheduler_name("hooks-scheduler");
      r.add_plugins("HookA");
      r.add_plugins("HookB");
      *r.mutable_pod() = p;
      r.set_node_name("node-0");
      return r;
    };
    // u1 is reserved, allowed and bound with a patch; HookB refuses u2's
    // Reserve, which kube-scheduler undoes; u3 waits at HookA's Permit;
    // HookB keeps u4 out of the queue.
    const v1::Pod u1 = labelled_pod("u1", {{"patch-HookA", "good"}});
    const v1::Pod u2 = labelled_pod("u2", {{"fail-HookB", "reserve"}});
    const v1::Pod u3 = labelled_pod("u3", {{"wait-HookA", "5000"}});
    const v1::Pod u4 = labelled_pod("u4", {{"fail-HookB", "pre_enqueue"}});
    grpc::ClientContext c1, c2, c3, c4, c5, c6, c7;
    v1::ReserveResponse reserved, refused;
    v1::UnreserveResponse undone;
    v1::PermitResponse allowed, waits;
    v1::PreBindResponse patch;
    v1::PreEnqueueResponse gated;
    ASSERT_TRUE(host.stub().Reserve(&c1, at(u1), &reserved).ok());
    ASSERT_TRUE(host.stub().Permit(&c2, at(u1), &allowed).ok());
    ASSERT_TRUE(host.stub().PreBind(&c3, at(u1), &patch).ok());
    ASSERT_TRUE(host.stub().Reserve(&c4, at(u2), &refused).ok());
    ASSERT_TRUE(host.stub().Unreserve(&c5, at(u2), &undone).ok());
    ASSERT_TRUE(host.stub().Permit(&c6, at(u3), &waits).ok());
    v1::PreEnqueueRequest enqueue;
    enqueue.set_session_id(welcome.session_id());
    enqueue.set_scheduler_name("hooks-scheduler");
    enqueue.add_plugins("HookB");
    *enqueue.mutable_pod() = u4;
    ASSERT_TRUE(host.stub().PreEnqueue(&c7, enqueue, &gated).ok());
    ASSERT_TRUE(refused.has_failed());
    ASSERT_EQ(waits.waits_size(), 1);
    ASSERT_TRUE(gated.has_gated());
    ASSERT_EQ(patch.annotations_size(), 2);
    host.app().recorder()->flush();
    EXPECT_EQ(host.app().recorder()->stats().calls, 8u);
  }
  std::vector<v1::RecordedMethod> methods;
  for (const v1::RecordEntry& e : recorded_entries())
    if (e.has_call()) methods.push_back(e.call().method());
  EXPECT_EQ(methods,
            (std::vector<v1::RecordedMethod>{
                v1::RECORDED_METHOD_PRE_FILTER, v1::RECORDED_METHOD_RESERVE,
                v1::RECORDED_METHOD_PERMIT, v1::RECORDED_METHOD_PRE_BIND,
                v1::RECORDED_METHOD_RESERVE, v1::RECORDED_METHOD_UNRESERVE,
                v1::RECORDED_METHOD_PERMIT, v1::RECORDED_METHOD_PRE_ENQUEUE}));

  const ReplayReport same = replay(record_, SCHEDPLUG_HOOK_PLUGIN_DIR);
  EXPECT_EQ(same.calls, 8u);
  EXPECT_FALSE(same.differs());
  for (const auto& d : same.examples)
    ADD_FAILURE() << d.kind << " " << d.pod << ": " << d.detail;

  // A recording whose first Reserve answered otherwise: the replay's own
  // answer differs from it, for that pod alone.
  std::vector<v1::RecordEntry> entries = recorded_entries();
  for (v1::RecordEntry& e : entries) {
    if (!e.has_call() || e.call().method() != v1::RECORDED_METHOD_RESERVE)
      continue;
    v1::ReserveResponse r;
    r.mutable_failed()->set_plugin("HookB");
    r.mutable_failed()->set_code(SCHEDPLUG_UNSCHEDULABLE);
    r.mutable_failed()->set_reason("no devices left");
    r.SerializeToString(e.mutable_call()->mutable_response());
    break;
  }
  const ReplayReport changed =
      replay(write_recording("tampered", entries), SCHEDPLUG_HOOK_PLUGIN_DIR);
  EXPECT_TRUE(changed.differs());
  EXPECT_EQ(changed.hooks_changed, 1u);
  ASSERT_EQ(changed.examples.size(), 1u);
  EXPECT_EQ(changed.examples[0].kind, "hook");
  EXPECT_EQ(changed.examples[0].pod, "ns/pod-u1");
  EXPECT_EQ(changed.examples[0].detail,
            "Reserve on node-0: HookB: Unschedulable (no devices left) in the "
            "recording, reserved in the replay");
}

TEST_F(RecordReplay, ADirectoryWithoutARecordingIsAClearError) {
  try {
    replay(dir_.path() / "same", same_);
    FAIL() << "replay of a plugin directory did not fail";
  } catch (const ReplayError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no recording files"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(record_ / record_file_name(1)) << "not a recording";
  try {
    replay(record_, same_);
    FAIL() << "replay of a file that is not a recording did not fail";
  } catch (const ReplayError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a schedplug recording"),
              std::string::npos)
        << e.what();
  }
}

// The replay's copy of each session's table (TableMirror) checks every
// index a recording gives it, as the host's NodeTable does: slot
// 0xFFFFFFFF once made `slot + 1` wrap to 0 and the write land out of
// bounds.
TEST(TableMirrorTest, RefusesIndicesTheHostRefusesAndStaysAsItWas) {
  auto node = [](uint32_t slot, const std::string& name) {
    v1::Node n;
    n.set_index(slot);
    n.set_name(name);
    return n;
  };
  TableMirror mirror;
  v1::NodeTableDelta full;
  full.set_full(true);
  full.set_new_version(1);
  for (uint32_t slot = 0; slot < 3; ++slot)
    *full.add_upserts() = node(slot, "node-" + std::to_string(slot));
  ASSERT_TRUE(mirror.apply(full));
  auto unchanged = [&](const std::string& what) {
    EXPECT_EQ(mirror.size(), 3u) << what;
    EXPECT_EQ(mirror.slot_count(), 3u) << what;
    EXPECT_EQ(mirror.version(), 1u) << what;
    EXPECT_EQ(mirror.name(0), "node-0") << what;
  };
  // Past the table's size (3) + the delta's upserts (1) + the headroom.
  for (uint32_t slot :
       {0xFFFFFFFFu, NodeTable::kMaxSlots, 3 + 1 + NodeTable::kSlotHeadroom}) {
    v1::NodeTableDelta far;
    far.set_base_version(1);
    far.set_new_version(2);
    *far.add_upserts() = node(slot, "far");
    std::string error;
    EXPECT_FALSE(mirror.apply(far, &error)) << slot;
    EXPECT_NE(
        error.find("at index " + std::to_string(slot) + " is beyond the table"),
        std::string::npos)
        << error;
    EXPECT_EQ(far.upserts_size(), 1) << "a refused delta is left as it was";
    unchanged(std::to_string(slot));
  }
  struct Case {
    const char* what;
    std::vector<uint32_t> removed;
    std::vector<v1::Node> upserts;
    const char* error;
  };
  const Case cases[] = {
      {"an empty slot removed", {7}, {}, "removed lists node index 7"},
      {"a slot removed twice", {1, 1}, {}, "node index 1 twice"},
      {"a node without a name", {}, {node(0, "")}, "index 0 has no name"},
      {"an index twice", {}, {node(4, "a"), node(4, "b")}, "index 4 appears"},
  };
  for (const Case& c : cases) {
    v1::NodeTableDelta d;
    d.set_base_version(1);
    d.set_new_version(2);
    for (uint32_t slot : c.removed) d.add_removed(slot);
    for (const v1::Node& n : c.upserts) *d.add_upserts() = n;
    std::string error;
    EXPECT_FALSE(mirror.apply(d, &error)) << c.what;
    EXPECT_NE(error.find(c.error), std::string::npos)
        << c.what << ": " << error;
    unchanged(c.what);
  }
  // The last index the host accepts in such a delta.
  v1::NodeTableDelta edge;
  edge.set_base_version(1);
  edge.set_new_version(2);
  edge.add_removed(2);
  *edge.add_upserts() = node(3 + 1 + NodeTable::kSlotHeadroom - 1, "edge");
  ASSERT_TRUE(mirror.apply(edge));
  EXPECT_EQ(mirror.size(), 3u);
  EXPECT_EQ(mirror.name(2), "");
  EXPECT_EQ(mirror.name(1027), "edge");
  EXPECT_EQ(mirror.version(), 2u);
}

// Replay reads the files by their number: record-0001000000 after
// record-999999 (a name of the hosts before the wider numbers), although
// it sorts first as text. The second file says its host ran another
// configuration, and the note names it.
TEST_F(RecordReplay, FilesAreReplayedInTheOrderOfTheirNumbers) {
  record(5);
  const std::vector<v1::RecordEntry> entries = recorded_entries();
  const auto dir = dir_.path() / "ordered";
  std::filesystem::create_directories(dir);
  std::vector<v1::RecordEntry> reloaded = entries;
  ASSERT_TRUE(reloaded[0].has_header());
  reloaded[0].mutable_header()->mutable_plugin_set()->mutable_config()->append(
      "# reloaded\n");
  using Named = std::pair<std::string, const std::vector<v1::RecordEntry>*>;
  for (const auto& [name, file] :
       {Named{"record-999999.sprec.gz", &entries},
        Named{record_file_name(1000000), &reloaded}}) {
    RecordFileWriter writer(dir / name);
    for (const v1::RecordEntry& e : *file) writer.write(e);
    writer.close();
  }
  const ReplayReport report = replay(dir, same_);
  EXPECT_EQ(report.files, 2u);
  EXPECT_FALSE(report.differs());
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_EQ(report.notes[0].rfind(record_file_name(1000000) +
                                      ": the recorded host ran another "
                                      "configuration",
                                  0),
            0u)
      << report.notes[0];
}

// A hostile recording: a PreFilter whose delta puts a node at index
// 0xFFFFFFFF, recorded as if it had moved the table. The replay's host
// refuses the delta (an error for that pod), and the replay goes on; the
// mirror never sees it.
TEST_F(RecordReplay, AHugeRecordedSlotIsAnErrorNotAWrite) {
  record(20);
  v1::NodeTableDelta far;
  far.set_base_version(1);
  far.set_new_version(2);
  v1::Node* n = far.add_upserts();
  n->set_index(0xFFFFFFFFu);
  n->set_name("far");
  const auto hostile =
      write_recording("hostile", with_hostile_call(recorded_entries(), far));
  const ReplayReport report = replay(hostile, same_);
  EXPECT_EQ(report.cycles, 21u);
  EXPECT_EQ(report.new_errors, 1u);
  EXPECT_EQ(report.feasible_changed + report.best_node_changed, 0u);
  ASSERT_EQ(report.examples.size(), 1u);
  EXPECT_EQ(report.examples[0].pod, "default/hostile");
  EXPECT_NE(report.examples[0].detail.find("at index 4294967295"),
            std::string::npos)
      << report.examples[0].detail;
}

// A hostile recording: a PreFilter whose delta the replay's host refuses
// (index 0 holds node-0 and the delta puts "ghost" there without removing
// it). The replay's copy of the table must not follow it: the differences
// after it still name node-0.
TEST_F(RecordReplay, ADeltaTheReplayRefusedDoesNotMoveItsTable) {
  record(20);
  v1::NodeTableDelta ghost;
  ghost.set_base_version(1);
  ghost.set_new_version(2);
  v1::Node* n = ghost.add_upserts();
  n->set_index(0);
  n->set_name("ghost");
  const auto hostile =
      write_recording("hostile", with_hostile_call(recorded_entries(), ghost));
  const ReplayReport report = replay(hostile, changed_);
  EXPECT_EQ(report.new_errors, 1u) << "the refused delta's PreFilter";
  EXPECT_EQ(report.feasible_changed, 3u) << "pod-3, pod-10 and pod-17";
  bool named = false;
  for (const ReplayDifference& d : report.examples) {
    if (d.pod == "default/hostile") continue;  // the host's refusal names it
    EXPECT_EQ(d.detail.find("ghost"), std::string::npos) << d.detail;
    if (d.pod == "default/pod-3" && d.kind == "feasible") {
      named = true;
      EXPECT_NE(d.detail.find("node-0 passed in the recording"),
                std::string::npos)
          << d.detail;
    }
  }
  EXPECT_TRUE(named) << "no feasible-set difference for default/pod-3";
}

// A hostile recording: its configuration names a shadow candidate outside
// the replay's --plugins, by absolute path or with "..". Replay uses the
// recording's configuration by default, so it must refuse it before
// opening the file (the candidate's constructor would leave a marker).
TEST_F(RecordReplay, AShadowOutsidePluginsInTheRecordingIsNeverLoaded) {
  record(3);
  const std::vector<v1::RecordEntry> entries = recorded_entries();
  std::ifstream in(config_);
  const std::string config((std::istreambuf_iterator<char>(in)), {});
  const auto outside = dir_.path() / "outside";
  std::filesystem::create_directories(outside);
  std::filesystem::copy_file(SCHEDPLUG_CTOR_MARKER_PLUGIN,
                             outside / "reloadable.so");
  const auto marker = dir_.path() / "constructor-ran";
  ::setenv("SCHEDPLUG_TEST_MARKER", marker.c_str(), 1);
  struct Unset {
    ~Unset() { ::unsetenv("SCHEDPLUG_TEST_MARKER"); }
  } unset;
  int n = 0;
  for (const std::string& shadow : {(outside / "reloadable.so").string(),
                                    std::string("../outside/reloadable.so")}) {
    std::vector<v1::RecordEntry> hostile = entries;
    ASSERT_TRUE(hostile[0].has_header());
    hostile[0].mutable_header()->mutable_plugin_set()->set_config(
        config +
        "    pluginConfig:\n"
        "      - name: Reloadable\n"
        "        args:\n"
        "          schedplug:\n"
        "            shadow: \"" +
        shadow + "\"\n");
    const auto dir = write_recording("hostile-" + std::to_string(++n), hostile);
    std::ostringstream diagnostics;
    try {
      replay(dir, same_, &diagnostics);
      ADD_FAILURE() << shadow << ": the replay ran";
    } catch (const ReplayError& e) {
      EXPECT_NE(std::string(e.what()).find("replay cannot start a host"),
                std::string::npos)
          << e.what();
    }
    EXPECT_NE(
        diagnostics.str().find("args.schedplug.shadow is \"" + shadow + "\", "),
        std::string::npos)
        << diagnostics.str();
    EXPECT_FALSE(std::filesystem::exists(marker))
        << shadow << ": replay opened a file outside --plugins";
    std::filesystem::remove(marker);
  }
}

}  // namespace
}  // namespace schedplug::host::testing
