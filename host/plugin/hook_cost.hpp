// What one call of a plugin's filter or score costs, learned from its own
// runs, so that the chain shares a loop over nodes with the pool's workers
// only when that pays. Waking a worker costs tens of microseconds, and on a
// busy machine a worker that took a chunk and lost its core makes the whole
// call wait for it; a loop that takes less than kShareAbove on one thread
// (500 nodes of the sample plugins take 25 us; 5000 nodes, 100 us each)
// runs on the request thread alone.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace schedplug::host {

class HookCost {
 public:
  static constexpr std::chrono::microseconds kShareAbove{300};

  // Whether `calls` calls of the hook are worth splitting over the pool.
  // True while the cost is unknown (the first runs measure it).
  bool worth_sharing(size_t calls) const {
    const uint64_t per_call = ns_per_call_.load(std::memory_order_relaxed);
    if (per_call == 0) return true;
    return per_call * calls >
           static_cast<uint64_t>(std::chrono::nanoseconds(kShareAbove).count());
  }

  // A loop made `calls` calls in `took` (wall time: a shared loop looks up
  // to threads-times cheaper, so a plugin near the threshold may alternate
  // between the two, which cost about the same there).
  void add(std::chrono::nanoseconds took, uint64_t calls) {
    if (calls == 0 || took.count() <= 0) return;
    const uint64_t sample =
        std::max<uint64_t>(1, static_cast<uint64_t>(took.count()) / calls);
    const uint64_t old = ns_per_call_.load(std::memory_order_relaxed);
    // An exponential average over about eight loops; a race between two
    // concurrent loops loses one sample, which does not matter.
    ns_per_call_.store(old == 0 ? sample : old - old / 8 + sample / 8,
                       std::memory_order_relaxed);
  }

  uint64_t ns_per_call() const {
    return ns_per_call_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> ns_per_call_{0};  // 0: unknown
};

}  // namespace schedplug::host
