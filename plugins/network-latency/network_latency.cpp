// NetworkLatency: prefer the nodes with the lowest network latency.
//
// A node agent writes per-node latency figures (milliseconds) to a file;
// Refresh re-reads it on the host's background thread (every
// `refreshPeriod`, 5s by default) and publishes a new immutable table;
// BeginPod takes the current table once per pod and Score only looks the
// node up in it. Raw
// scores are microseconds, normalized by the host with reversed min-max, so
// the lowest latency scores 100.
#include <chrono>
#include <cmath>
#include <memory>
#include <schedplug/plugin.hpp>
#include <string>

#include "latency_table.hpp"

namespace network_latency {
namespace {

class NetworkLatency {
 public:
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_REVERSE;
  // How often the host calls Refresh (and once right after create) unless
  // the `refreshPeriod` arg says otherwise (Configure).
  static constexpr uint32_t kRefreshPeriodMs = 5000;

  NetworkLatency(const schedplug::Args& args, const schedplug::Host& host)
      : host_(host) {
    args.allow_only({"latencyFile", "defaultLatencyMs", "refreshPeriod"});
    file_ = args.required_string("latencyFile");
    default_micros_ = std::llround(
        args.number("defaultLatencyMs", 100.0, 0.0, kMaxLatencyMs) * 1000.0);
    const auto period =
        std::chrono::duration_cast<std::chrono::milliseconds>(args.duration(
            "refreshPeriod", std::chrono::milliseconds(kRefreshPeriodMs)));
    if (period < std::chrono::milliseconds(100) ||
        period > std::chrono::hours(24)) {
      throw schedplug::ArgsError(
          "arg \"refreshPeriod\" must be from 100ms to 24h, got " +
          std::to_string(period.count()) + "ms");
    }
    refresh_period_ms_ = static_cast<uint32_t>(period.count());
    // An empty table until the first Refresh: every node gets the default.
    table_.publish(std::make_shared<const LatencyTable>());
  }

  void Configure(schedplug::Settings& settings) const {
    settings.refresh_period_ms = refresh_period_ms_;
  }

  // Once per pod: take the current table (one lock), then score every node
  // against that snapshot without locking.
  using PodState = std::shared_ptr<const LatencyTable>;
  schedplug::Status BeginPod(const schedplug::Pod&, PodState& table,
                             schedplug::Gates&) const {
    table = table_.load();
    return schedplug::Status::Success();
  }

  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node& node,
                          const PodState& table, int64_t& score) const {
    score = table->micros(node.name()).value_or(default_micros_);
    return schedplug::Status::Success();
  }

  // On failure the previous table stays in use; the host logs the error and
  // tries again next period.
  schedplug::Status Refresh() {
    std::shared_ptr<const LatencyTable> next;
    try {
      next = std::make_shared<const LatencyTable>(LatencyTable::read(file_));
    } catch (const LatencyFileError& e) {
      return schedplug::Status::Error(e.what());
    }
    const size_t count = next->size();
    table_.publish(std::move(next));
    host_.debug("read latency of " + std::to_string(count) + " node(s) from " +
                file_.string());
    return schedplug::Status::Success();
  }

 private:
  schedplug::Host host_;
  std::filesystem::path file_;
  int64_t default_micros_ = 0;
  uint32_t refresh_period_ms_ = kRefreshPeriodMs;
  schedplug::Published<LatencyTable> table_;
};

}  // namespace
}  // namespace network_latency

SCHEDPLUG_PLUGIN(network_latency::NetworkLatency, "NetworkLatency", "1.0.0")
