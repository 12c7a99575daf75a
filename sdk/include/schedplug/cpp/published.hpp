// schedplug C++ layer, part "published": Published<T>, how Refresh hands
// a new immutable snapshot to the hot-path hooks. Included by
// <schedplug/plugin.hpp>.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>

namespace schedplug {

// ---------------------------------------------------------------------------
// Published<T>: what Refresh computes, read by the hot-path hooks.
// Refresh builds a new immutable T and publishes it; readers get a
// shared_ptr that keeps their snapshot alive even if a newer one is
// published meanwhile. The lock is held only to copy or swap the pointer;
// readers share it, so concurrent Score calls do not wait for each other.
//
// Not std::atomic<std::shared_ptr>: libstdc++ 12 releases its internal lock
// with a relaxed store after a load, which ThreadSanitizer reports
// as a race with the next store.
// ---------------------------------------------------------------------------

template <class T>
class Published {
 public:
  Published() = default;
  explicit Published(std::shared_ptr<const T> initial)
      : value_(std::move(initial)) {}

  std::shared_ptr<const T> load() const {
    std::shared_lock lock(mu_);
    return value_;
  }
  void publish(std::shared_ptr<const T> next) {
    {
      std::unique_lock lock(mu_);
      value_.swap(next);
    }
    // `next` now holds the old value: freed here, outside the lock, unless
    // a reader still uses it.
  }

 private:
  mutable std::shared_mutex mu_;
  std::shared_ptr<const T> value_;
};

}  // namespace schedplug
