// When a call must have answered by. The chain checks it between plugins
// and between chunks of nodes; a running plugin call is never interrupted.
#pragma once

#include <chrono>
#include <optional>

namespace schedplug::host {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline never() { return Deadline(); }
  static Deadline at(Clock::time_point when) { return Deadline(when); }

  bool expired() const { return when_ && Clock::now() >= *when_; }
  std::optional<Clock::time_point> when() const { return when_; }

 private:
  Deadline() = default;
  explicit Deadline(Clock::time_point when) : when_(when) {}
  std::optional<Clock::time_point> when_;
};

}  // namespace schedplug::host
