// A fixed pool of worker threads for data-parallel loops over nodes.
//
// The calling thread takes part in its own loop, so a pool of N-1 workers
// keeps N cores busy, and concurrent loops (several RPCs) share the workers
// instead of oversubscribing the machine.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace schedplug::host {

class ThreadPool {
 public:
  // `workers` threads besides the callers; 0 runs every loop on the caller.
  explicit ThreadPool(unsigned workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Workers for this machine: hardware_concurrency() - 1 (callers make up
  // the last core), at least 1.
  static unsigned default_workers();

  unsigned workers() const { return static_cast<unsigned>(threads_.size()); }

  // Runs body(i) for every i in [0, count), on the caller and the workers
  // (with share = false on the caller alone, in order).
  // Before each index, `stop` (when set) is asked; once it says true no new
  // index starts. Returns when every started body has returned; the number
  // of indices that ran is returned. Exceptions must not escape `body`.
  size_t parallel_for(size_t count, const std::function<void(size_t)>& body,
                      const std::function<bool()>& stop = {},
                      bool share = true);

 private:
  struct Loop;
  void work();
  // Runs indices of `loop` until none are left or it is closed.
  static void drain(Loop& loop);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Loop>> loops_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace schedplug::host
