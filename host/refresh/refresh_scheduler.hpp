// Calls each plugin's refresh hook periodically, each on its own
// background thread, never on a request thread.
//
// A refresh that fails is logged and retried after its period. A refresh
// that hangs only holds up its own thread: a watchdog logs it (once per
// hang) and requests keep using what the plugin's last refresh prepared.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/metrics/host_metrics.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

struct RefreshTarget {
  PluginInstance* instance = nullptr;
  std::string profile;  // for log lines
};

class RefreshScheduler {
 public:
  // Starts one thread per target whose plugin has a refresh hook (the
  // first call happens right away). `metrics` may be null.
  RefreshScheduler(const std::vector<RefreshTarget>& targets,
                   HostMetrics* metrics);
  // stop() with a 5 s grace period. Hung threads are detached; they keep
  // their own state alive, but the plugin instance must outlive them.
  ~RefreshScheduler();
  RefreshScheduler(const RefreshScheduler&) = delete;
  RefreshScheduler& operator=(const RefreshScheduler&) = delete;

  size_t threads() const { return threads_; }

  // Stops every thread, waiting up to `grace` for refresh calls in flight.
  // Returns the plugins whose refresh was still running after that (their
  // threads are detached; the caller must not destroy those instances).
  std::vector<std::string> stop(std::chrono::milliseconds grace);

 private:
  struct Worker;
  struct State;  // shared with the threads, so a detached one stays safe
  static void run(std::shared_ptr<State> state, Worker& worker);
  static void watch(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
  size_t threads_ = 0;
  std::thread watchdog_;
};

}  // namespace schedplug::host
