#include "host/chain/thread_pool.hpp"

#include <algorithm>

namespace schedplug::host {

// One parallel_for. Indices are claimed under the loop's own mutex: loops
// are split into a few dozen chunks, so the lock is cheap, and it makes
// "closed" exact: no body starts after the caller decided to return.
struct ThreadPool::Loop {
  const std::function<void(size_t)>* body = nullptr;
  const std::function<bool()>* stop = nullptr;
  size_t count = 0;

  std::mutex mutex;
  std::condition_variable idle;
  size_t next = 0;
  size_t running = 0;
  size_t ran = 0;
  bool closed = false;

  // The next index to run, or false when the loop is exhausted, stopped or
  // closed. Everything happens under the lock: a worker may still hold a
  // loop whose caller has returned, and `body`/`stop` belong to that
  // caller, so they are only touched while the caller is provably waiting
  // (not closed yet, or running > 0).
  bool claim(size_t& index) {
    std::lock_guard lock(mutex);
    if (closed || next >= count) return false;
    if (stop != nullptr && *stop && (*stop)()) {
      closed = true;
      return false;
    }
    index = next++;
    ++running;
    return true;
  }
  void finish() {
    std::lock_guard lock(mutex);
    --running;
    ++ran;
    if (running == 0) idle.notify_all();
  }
};

ThreadPool::ThreadPool(unsigned workers) {
  threads_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i)
    threads_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

unsigned ThreadPool::default_workers() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 1 ? cores - 1 : 1;
}

void ThreadPool::drain(Loop& loop) {
  size_t index = 0;
  while (loop.claim(index)) {
    (*loop.body)(index);
    loop.finish();
  }
}

void ThreadPool::work() {
  for (;;) {
    std::shared_ptr<Loop> loop;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !loops_.empty(); });
      if (stopping_) return;
      loop = loops_.front();
    }
    drain(*loop);
    // Exhausted: take it off the queue if nobody did yet.
    std::lock_guard lock(mutex_);
    auto it = std::find(loops_.begin(), loops_.end(), loop);
    if (it != loops_.end()) loops_.erase(it);
  }
}

size_t ThreadPool::parallel_for(size_t count,
                                const std::function<void(size_t)>& body,
                                const std::function<bool()>& stop,
                                bool share_with_workers) {
  if (count == 0) return 0;
  auto loop = std::make_shared<Loop>();
  loop->body = &body;
  loop->stop = &stop;
  loop->count = count;
  const bool share = share_with_workers && !threads_.empty() && count > 1;
  if (share) {
    {
      std::lock_guard lock(mutex_);
      loops_.push_back(loop);
    }
    const size_t helpers = std::min<size_t>(threads_.size(), count - 1);
    for (size_t i = 0; i < helpers; ++i) wake_.notify_one();
  }
  drain(*loop);
  std::unique_lock lock(loop->mutex);
  loop->closed = true;
  loop->idle.wait(lock, [&] { return loop->running == 0; });
  const size_t ran = loop->ran;
  lock.unlock();
  if (share) {
    std::lock_guard pool_lock(mutex_);
    auto it = std::find(loops_.begin(), loops_.end(), loop);
    if (it != loops_.end()) loops_.erase(it);
  }
  return ran;
}

}  // namespace schedplug::host
