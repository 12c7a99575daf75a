// Shadow mode: a candidate build of a plugin (args.schedplug.shadow) runs
// beside the live one on the same pods and nodes, after the live answer
// went out, on a thread of its own, and never affects a decision. What the
// two disagree on is counted per plugin (verdicts that differ, score rank
// order that differs, best node that differs, candidate errors) and
// logged, sampled, with the pod, the node and both answers.
//
// The queue is bounded: a job that finds it full is dropped and counted,
// so a slow candidate never slows the live path. A job holds what it reads
// (the plugin generation, the pod as the call carried it, the nodes it
// evaluated), so the session's table may change meanwhile.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/reload/plugin_generation.hpp"
#include "host/table/compact_node.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

class HostMetrics;

// One pod's filter pass, as the live chain answered it.
struct ShadowFilterJob {
  std::shared_ptr<const PluginGeneration> plugins;
  const ProfilePlugins* profile = nullptr;  // of `plugins`
  v1::Pod pod;
  std::vector<std::shared_ptr<const CompactNode>> nodes;
  // Per node: the index in profile->filters of the live filter that
  // rejected it (-1: none did), and that filter's reason.
  std::vector<int> rejected_by;
  std::vector<std::string> live_reason;
  // Per filter: its gate skipped the pod, or it did not finish.
  std::vector<bool> skipped;
  std::vector<bool> unfinished;
};

// One pod's score pass, as the live chain answered it.
struct ShadowScoreJob {
  std::shared_ptr<const PluginGeneration> plugins;
  const ProfilePlugins* profile = nullptr;
  v1::Pod pod;
  std::vector<std::shared_ptr<const CompactNode>> nodes;
  // Per scorer: its normalized scores, parallel to `nodes` (empty: it was
  // skipped, failed or did not finish; not compared).
  std::vector<std::vector<int64_t>> live;
};

class ShadowRunner {
 public:
  // `metrics` may be null. At most `capacity` jobs wait.
  explicit ShadowRunner(HostMetrics* metrics, size_t capacity = 64);
  ~ShadowRunner();
  ShadowRunner(const ShadowRunner&) = delete;
  ShadowRunner& operator=(const ShadowRunner&) = delete;

  // Queues a job; false when the queue was full (the job is dropped and
  // counted in schedplug_shadow_dropped_total).
  bool submit(ShadowFilterJob job);
  bool submit(ShadowScoreJob job);
  // Waits until every queued job has run (tests).
  void drain();
  // A candidate's hook hung past --hook-hard-limit on the shadow thread
  // (`why` says which): no more jobs run, every job is dropped and counted,
  // and the live path goes on. The thread stays in the hook, holding what
  // its job holds; the owner must not destroy this runner (abandoned()).
  void abandon(const std::string& why);
  bool abandoned() const;

 private:
  bool push(std::function<void()> job);
  void run();
  void filter(const ShadowFilterJob& job);
  void score(const ShadowScoreJob& job);
  // A sampled log line: at most one per `key` (plugin and extension
  // point) every 10 seconds.
  void sample(const std::string& key, const std::string& line);

  HostMetrics* metrics_;
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> jobs_;
  bool running_job_ = false;
  bool stopping_ = false;
  std::atomic<bool> abandoned_{false};
  std::unordered_map<std::string, std::chrono::steady_clock::time_point>
      logged_;          // by plugin; only the shadow thread touches it
  std::thread thread_;  // last: started when the rest is ready
};

}  // namespace schedplug::host
