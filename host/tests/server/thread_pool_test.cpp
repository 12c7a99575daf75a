#include "host/chain/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace schedplug::host {
namespace {

TEST(ThreadPool, RunsEveryIndexExactlyOnce) {
  for (unsigned workers : {0u, 1u, 3u}) {
    ThreadPool pool(workers);
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
      std::vector<std::atomic<int>> hits(count);
      const size_t ran = pool.parallel_for(count, [&](size_t i) { ++hits[i]; });
      EXPECT_EQ(ran, count);
      for (size_t i = 0; i < count; ++i) EXPECT_EQ(hits[i].load(), 1) << i;
    }
  }
}

TEST(ThreadPool, StopsStartingIndicesOnceAsked) {
  ThreadPool pool(2);
  std::atomic<size_t> done{0};
  const size_t ran = pool.parallel_for(
      1000, [&](size_t) { ++done; }, [&] { return done.load() >= 10; });
  EXPECT_EQ(ran, done.load());
  EXPECT_LT(ran, 1000u);
  EXPECT_GE(ran, 10u);
}

TEST(ThreadPool, ConcurrentLoopsShareTheWorkers) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<size_t> total{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        std::vector<int> hits(64, 0);  // each index written by one thread
        pool.parallel_for(hits.size(), [&](size_t i) { hits[i] += 1; });
        for (int h : hits) {
          if (h == 1) ++total;
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4u * 50u * 64u);
}

// Regression: a worker could pick up a loop whose caller had already
// returned and call that caller's (dead) stop function.
TEST(ThreadPool, WorkersNeverTouchAFinishedLoop) {
  ThreadPool pool(2);
  size_t total = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<int> hits(2, 0);
    // The stop function reads the caller's stack, as the chains' deadline
    // check does; an atomic so that reading it races with nothing (TSan).
    std::atomic<bool> cancelled{false};
    const std::function<bool()> stop = [&cancelled] {
      return cancelled.load(std::memory_order_relaxed);
    };
    total += pool.parallel_for(
        hits.size(), [&](size_t i) { hits[i] = 1; }, stop);
  }
  EXPECT_EQ(total, 40000u);
}

}  // namespace
}  // namespace schedplug::host
