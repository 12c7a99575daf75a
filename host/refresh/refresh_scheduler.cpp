#include "host/refresh/refresh_scheduler.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A refresh counts as hung when it has run longer than this many periods
// (and at least kHungFloor).
constexpr int kHungPeriods = 2;
constexpr milliseconds kHungFloor{1000};
// How often a refresh that keeps failing is logged again.
constexpr std::chrono::seconds kRepeatLog{60};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

struct RefreshScheduler::Worker {
  PluginInstance* instance = nullptr;
  std::string profile;
  milliseconds period{0};
  std::thread thread;
  // Guarded by State::mutex.
  bool running = false;  // inside refresh()
  Clock::time_point started{};
  bool hang_reported = false;
  bool finished = false;
  // Failures in a row, and when the last one was logged: a refresh that
  // keeps failing is logged once a minute, not once a period.
  uint64_t failures_in_a_row = 0;
  Clock::time_point failure_logged{};
};

struct RefreshScheduler::State {
  HostMetrics* metrics = nullptr;
  std::mutex mutex;
  std::condition_variable wake;     // stop requests
  std::condition_variable stopped;  // a worker finished
  bool stopping = false;
  std::vector<std::unique_ptr<Worker>> workers;
};

RefreshScheduler::RefreshScheduler(const std::vector<RefreshTarget>& targets,
                                   HostMetrics* metrics)
    : state_(std::make_shared<State>()) {
  state_->metrics = metrics;
  for (const RefreshTarget& t : targets) {
    if (!t.instance->library().has_refresh()) continue;
    auto w = std::make_unique<Worker>();
    w->instance = t.instance;
    w->profile = t.profile;
    w->period = milliseconds(
        std::max<uint32_t>(1, t.instance->settings().refresh_period_ms));
    state_->workers.push_back(std::move(w));
  }
  threads_ = state_->workers.size();
  for (auto& w : state_->workers) {
    Worker* worker = w.get();
    worker->thread = std::thread([s = state_, worker] { run(s, *worker); });
  }
  if (threads_ > 0) watchdog_ = std::thread([s = state_] { watch(s); });
}

RefreshScheduler::~RefreshScheduler() { stop(milliseconds(5000)); }

void RefreshScheduler::run(std::shared_ptr<State> state, Worker& w) {
  const std::string& name = w.instance->name();
  std::unique_lock lock(state->mutex);
  while (!state->stopping) {
    w.running = true;
    w.started = Clock::now();
    w.hang_reported = false;
    lock.unlock();
    const Verdict result = w.instance->refresh();
    const auto refresh_took = Clock::now() - w.started;
    if (state->metrics) {
      state->metrics->refreshed(*w.instance, result.ok(), refresh_took);
    }
    lock.lock();
    const double took = std::chrono::duration<double>(refresh_took).count();
    w.running = false;
    if (result.ok()) {
      spdlog::trace("refresh of plugin {} (profile {}) took {:.3f} s", name,
                    w.profile, took);
      if (w.failures_in_a_row > 0) {
        spdlog::info(
            "refresh of plugin {} (profile {}) works again after {} failures",
            name, w.profile, w.failures_in_a_row);
      }
      w.failures_in_a_row = 0;
    } else {
      ++w.failures_in_a_row;
      const auto now = Clock::now();
      if (w.failures_in_a_row == 1 || now - w.failure_logged >= kRepeatLog) {
        w.failure_logged = now;
        spdlog::warn(
            "refresh of plugin {} (profile {}) failed after {:.3f} s ({} in a "
            "row): {}; retrying every {} ms, requests keep using its last "
            "refreshed data",
            name, w.profile, took, w.failures_in_a_row,
            result.reason.empty() ? "(no reason given)" : result.reason,
            w.period.count());
      }
    }
    if (w.hang_reported) {
      spdlog::info("refresh of plugin {} (profile {}) returned after {:.3f} s",
                   name, w.profile, took);
    }
    state->wake.wait_for(lock, w.period, [&] { return state->stopping; });
  }
  w.finished = true;
  state->stopped.notify_all();
}

void RefreshScheduler::watch(std::shared_ptr<State> state) {
  std::unique_lock lock(state->mutex);
  while (!state->stopping) {
    state->wake.wait_for(lock, milliseconds(250),
                         [&] { return state->stopping; });
    for (auto& w : state->workers) {
      if (!w->running || w->hang_reported) continue;
      const auto limit = std::max(kHungFloor, w->period * kHungPeriods);
      if (Clock::now() - w->started < limit) continue;
      w->hang_reported = true;
      spdlog::warn(
          "refresh of plugin {} (profile {}) has been running for {:.1f} s "
          "(period {} ms); requests keep using its last refreshed data. Give "
          "the plugin's I/O its own timeouts",
          w->instance->name(), w->profile, seconds_since(w->started),
          w->period.count());
    }
  }
}

std::vector<std::string> RefreshScheduler::stop(milliseconds grace) {
  std::vector<std::string> hung;
  State& s = *state_;
  {
    std::unique_lock lock(s.mutex);
    s.stopping = true;
    s.wake.notify_all();
    s.stopped.wait_until(lock, Clock::now() + grace, [&] {
      return std::all_of(s.workers.begin(), s.workers.end(),
                         [](const auto& w) { return w->finished; });
    });
    for (auto& w : s.workers) {
      if (!w->finished) hung.push_back(w->instance->name());
    }
  }
  if (watchdog_.joinable()) watchdog_.join();
  for (auto& w : s.workers) {
    if (!w->thread.joinable()) continue;
    bool finished;
    {
      std::lock_guard lock(s.mutex);
      finished = w->finished;
    }
    if (finished) {
      w->thread.join();
    } else {
      spdlog::error(
          "refresh of plugin {} (profile {}) is still running after the {} ms "
          "shutdown grace period; leaving its thread behind",
          w->instance->name(), w->profile, grace.count());
      w->thread.detach();
    }
  }
  return hung;
}

}  // namespace schedplug::host
