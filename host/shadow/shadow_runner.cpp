#include "host/shadow/shadow_runner.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "host/convert/convert.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/plugin/hook_watchdog.hpp"

namespace schedplug::host {
namespace {

std::string label(const v1::Pod& pod) {
  return pod.namespace_() + "/" + pod.name();
}

std::string candidate(const PluginInstance& shadow) {
  return fmt::format("{} (candidate {}, {})", shadow.name(),
                     shadow.library().version(),
                     shadow.library().file().filename().string());
}

// Node indices by score, highest first (ties by index).
std::vector<size_t> ranking(const std::vector<int64_t>& scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace

ShadowRunner::ShadowRunner(HostMetrics* metrics, size_t capacity)
    : metrics_(metrics), capacity_(capacity), thread_([this] { run(); }) {}

ShadowRunner::~ShadowRunner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool ShadowRunner::push(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    if (abandoned_ || jobs_.size() >= capacity_) {
      if (metrics_) metrics_->shadow_dropped();
      return false;
    }
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

bool ShadowRunner::submit(ShadowFilterJob job) {
  auto shared = std::make_shared<ShadowFilterJob>(std::move(job));
  return push([this, shared] { filter(*shared); });
}

bool ShadowRunner::submit(ShadowScoreJob job) {
  auto shared = std::make_shared<ShadowScoreJob>(std::move(job));
  return push([this, shared] { score(*shared); });
}

void ShadowRunner::drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] {
    return abandoned_.load() || (jobs_.empty() && !running_job_);
  });
}

void ShadowRunner::abandon(const std::string& why) {
  size_t dropped;
  {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    dropped = jobs_.size();
    jobs_.clear();
  }
  if (metrics_)
    for (size_t i = 0; i < dropped; ++i) metrics_->shadow_dropped();
  idle_.notify_all();
  spdlog::error(
      "shadow: {}: the host abandons its shadow candidates (no more run, "
      "each pod is counted in schedplug_shadow_dropped_total) and goes on "
      "serving the live plugins, which this does not affect; fix the "
      "candidate and restart the host to shadow again",
      why);
}

bool ShadowRunner::abandoned() const { return abandoned_.load(); }

void ShadowRunner::run() {
  mark_shadow_thread();
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lock.unlock();
    try {
      job();
    } catch (const std::exception& e) {
      spdlog::warn("shadow: a candidate run failed: {}", e.what());
    }
    job = nullptr;  // what the job held goes before the next one
    lock.lock();
    running_job_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

void ShadowRunner::sample(const std::string& key, const std::string& line) {
  const auto now = std::chrono::steady_clock::now();
  auto [it, first] = logged_.try_emplace(key, now);
  if (!first && now - it->second < std::chrono::seconds(10)) return;
  it->second = now;
  spdlog::info(
      "shadow: {} (at most one line per plugin and extension point "
      "every 10 s; the metrics count them all)",
      line);
}

void ShadowRunner::filter(const ShadowFilterJob& job) {
  const PodModel pod(pod_from_proto(job.pod));
  const ProfilePlugins& profile = *job.profile;
  for (size_t i = 0; i < profile.filters.size(); ++i) {
    const PluginInstance* shadow = profile.filter_shadows[i];
    if (shadow == nullptr || job.unfinished[i]) continue;
    const std::string& name = profile.filters[i]->name();
    const PodScope scope = shadow->begin_pod(pod.view());
    size_t differing = 0;
    std::string example;
    bool error = !scope.error().empty();
    for (size_t n = 0; n < job.nodes.size() && !error; ++n) {
      // A node an earlier filter rejected never reached this one.
      if (job.rejected_by[n] >= 0 &&
          static_cast<size_t>(job.rejected_by[n]) < i)
        continue;
      const bool live_rejects = job.rejected_by[n] == static_cast<int>(i);
      Verdict verdict;
      if (scope.runs_filter()) {
        verdict = shadow->filter(scope.pod(), job.nodes[n]->view());
      }
      // As the live chain does, a SKIP from filter() counts as an error.
      if (verdict.code == SCHEDPLUG_ERROR || verdict.code == SCHEDPLUG_SKIP) {
        error = true;
        example =
            fmt::format("pod {} on node {}: the candidate failed: {}",
                        label(job.pod), job.nodes[n]->name(), verdict.reason);
        break;
      }
      const bool rejects = !verdict.ok();
      if (rejects == live_rejects) continue;
      if (differing++ == 0) {
        example = fmt::format(
            "pod {} on node {}: live {} ({}), candidate {} ({})",
            label(job.pod), job.nodes[n]->name(),
            live_rejects ? "rejects" : "passes",
            live_rejects ? job.live_reason[n]
                         : (job.skipped[i] ? "skipped by its gate" : "fits"),
            rejects ? "rejects" : "passes",
            rejects ? verdict.reason
                    : (scope.runs_filter() ? "fits" : "skipped by its gate"));
      }
    }
    if (scope.error().size() > 0) {
      example = fmt::format("pod {}: the candidate's pod_begin failed: {}",
                            label(job.pod), scope.error());
    }
    if (metrics_) {
      metrics_->shadow_compared(name, "filter");
      if (error) metrics_->shadow_disagreed(name, "error", 1);
      if (differing > 0)
        metrics_->shadow_disagreed(name, "verdicts", differing);
    }
    if (error || differing > 0) {
      sample(name + " filter",
             fmt::format("{}: {}{}", candidate(*shadow), example,
                         differing > 1
                             ? fmt::format(" ({} nodes differ)", differing)
                             : ""));
    }
  }
}

void ShadowRunner::score(const ShadowScoreJob& job) {
  const PodModel pod(pod_from_proto(job.pod));
  const ProfilePlugins& profile = *job.profile;
  for (size_t i = 0; i < profile.scorers.size(); ++i) {
    const PluginInstance* shadow = profile.scorer_shadows[i];
    const std::vector<int64_t>& live = job.live[i];
    if (shadow == nullptr || live.empty() || job.nodes.empty()) continue;
    const std::string& name = profile.scorers[i]->name();
    const PodScope scope = shadow->begin_pod(pod.view());
    std::string error = scope.error();
    std::vector<schedplug_node_score> scores(job.nodes.size());
    for (size_t n = 0; n < job.nodes.size() && error.empty(); ++n) {
      scores[n].node_name = job.nodes[n]->view().name;
      if (!scope.runs_score()) continue;
      const ScoreResult r = shadow->score(scope.pod(), job.nodes[n]->view());
      if (r.code != SCHEDPLUG_SUCCESS) {
        error =
            fmt::format("score on node {}: {}", job.nodes[n]->name(), r.reason);
        break;
      }
      scores[n].score = r.score;
    }
    if (error.empty()) {
      if (const Verdict v = shadow->normalize(scope.pod(), scores); !v.ok())
        error = v.reason;
    }
    if (metrics_) metrics_->shadow_compared(name, "score");
    if (!error.empty()) {
      if (metrics_) metrics_->shadow_disagreed(name, "error", 1);
      sample(name + " score",
             fmt::format("{}: pod {}: the candidate failed: {}",
                         candidate(*shadow), label(job.pod), error));
      continue;
    }
    std::vector<int64_t> mine(scores.size());
    for (size_t n = 0; n < scores.size(); ++n) mine[n] = scores[n].score;
    const std::vector<size_t> a = ranking(live), b = ranking(mine);
    const bool best =
        a.front() != b.front() && live[b.front()] != live[a.front()];
    const bool rank = a != b;
    if (metrics_) {
      if (rank) metrics_->shadow_disagreed(name, "rank", 1);
      if (best) metrics_->shadow_disagreed(name, "best_node", 1);
    }
    if (rank || best) {
      sample(
          name,
          fmt::format(
              "{}: pod {}: best node live {} ({}), candidate {} "
              "({}){}",
              candidate(*shadow), label(job.pod), job.nodes[a.front()]->name(),
              live[a.front()], job.nodes[b.front()]->name(), mine[b.front()],
              best ? "" : " (the same score live: ranks differ below)"));
    }
  }
}

}  // namespace schedplug::host
