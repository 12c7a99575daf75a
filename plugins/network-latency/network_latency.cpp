// NetworkLatency: prefer the nodes with the lowest network latency.
//
// A node agent writes per-node latency figures (milliseconds) to a file;
// Refresh re-reads it on the host's background thread and publishes a new
// immutable table; Score only looks the node up in the current table. Raw
// scores are microseconds, normalized by the host with reversed min-max, so
// the lowest latency scores 100.
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
  // How often the host calls Refresh (and once right after create).
  static constexpr uint32_t kRefreshPeriodMs = 5000;

  NetworkLatency(const schedplug::Args& args, const schedplug::Host& host)
      : host_(host) {
    args.allow_only({"latencyFile", "defaultLatencyMs"});
    file_ = args.required_string("latencyFile");
    default_micros_ = std::llround(
        args.number("defaultLatencyMs", 100.0, 0.0, kMaxLatencyMs) * 1000.0);
    // An empty table until the first Refresh: every node gets the default.
    table_.publish(std::make_shared<const LatencyTable>());
  }

  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node& node,
                          int64_t& score) const {
    const std::shared_ptr<const LatencyTable> table = table_.load();
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
  schedplug::Published<LatencyTable> table_;
};

}  // namespace
}  // namespace network_latency

SCHEDPLUG_PLUGIN(network_latency::NetworkLatency, "NetworkLatency", "1.0.0")
