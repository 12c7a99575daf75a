#include "host/chain/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "host/plugin/hook_cost.hpp"

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

TEST(ThreadPool, UnsharedLoopsRunOnTheCallerInOrder) {
  ThreadPool pool(3);
  std::vector<size_t> order;
  std::vector<std::thread::id> threads;
  const size_t ran = pool.parallel_for(
      100,
      [&](size_t i) {
        order.push_back(i);  // no lock: only the caller may run
        threads.push_back(std::this_thread::get_id());
      },
      {}, /*share=*/false);
  EXPECT_EQ(ran, 100u);
  ASSERT_EQ(order.size(), 100u);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i], i);
    EXPECT_EQ(threads[i], std::this_thread::get_id());
  }
}

TEST(HookCost, SharesOnlyLoopsThatAreSlowOnOneThread) {
  HookCost cost;
  // Unknown: shared, so that the first runs of a slow plugin are not
  // serialized.
  EXPECT_TRUE(cost.worth_sharing(1));
  // 50 ns a call (the sample plugins): 5000 nodes are 250 us, under the
  // threshold; 10000 are not.
  cost.add(std::chrono::microseconds(25), 500);
  EXPECT_EQ(cost.ns_per_call(), 50u);
  EXPECT_FALSE(cost.worth_sharing(5000));
  EXPECT_TRUE(cost.worth_sharing(10000));
  // A plugin that turns slow (a refresh made its look-ups costly) is
  // shared again within a few loops.
  for (int i = 0; i < 20; ++i) cost.add(std::chrono::milliseconds(5), 500);
  EXPECT_TRUE(cost.worth_sharing(500));
  // Loops that made no call teach nothing.
  const uint64_t before = cost.ns_per_call();
  cost.add(std::chrono::milliseconds(1), 0);
  EXPECT_EQ(cost.ns_per_call(), before);
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
