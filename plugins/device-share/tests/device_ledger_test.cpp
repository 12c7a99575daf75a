// DeviceShare's bookkeeping (device_ledger.hpp) on its own: parsing, the
// used set, the reservations' lifetimes and concurrent Reserve calls.
#include "device_ledger.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace device_share {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

// A clock the test moves by hand.
struct FakeClock {
  Ledger::Clock::time_point now{};
  std::function<Ledger::Clock::time_point()> fn() {
    return [this] { return now; };
  }
};

// A ledger on a fake clock.
class DeviceLedgerTest : public ::testing::Test {
 protected:
  FakeClock clock;
  Ledger ledger{clock.fn()};
};

DeviceSet Set(std::initializer_list<int> indices) {
  DeviceSet s;
  for (int i : indices) s.set(static_cast<size_t>(i));
  return s;
}

TEST(DeviceLedgerParse, AcceptsPlainDigitsInRange) {
  EXPECT_EQ(ParseCount("0"), 0);
  EXPECT_EQ(ParseCount("4"), 4);
  EXPECT_EQ(ParseCount("064"), 64);
  EXPECT_EQ(ParseRequest("1"), 1);
  EXPECT_EQ(ParseRequest("16"), 16);
}

TEST(DeviceLedgerParse, RefusesEverythingElse) {
  for (const char* bad : {"", " 4", "4 ", "+4", "-1", "4.0", "0x4", "four",
                          "1e3", "4,", "99999999999999999999", "2147483648"}) {
    EXPECT_EQ(ParseCount(bad), std::nullopt) << '"' << bad << '"';
    EXPECT_EQ(ParseRequest(bad), std::nullopt) << '"' << bad << '"';
  }
  EXPECT_EQ(ParseCount("65"), std::nullopt);
  EXPECT_EQ(ParseRequest("0"), std::nullopt);
  EXPECT_EQ(ParseRequest("17"), std::nullopt);
}

TEST(DeviceLedgerParseAssigned, ReadsDashSeparatedIndices) {
  EXPECT_EQ(ParseAssigned("0"), Set({0}));
  EXPECT_EQ(ParseAssigned("0-3-5"), Set({0, 3, 5}));
  EXPECT_EQ(ParseAssigned("63"), Set({63}));
  // A repeated index counts once.
  EXPECT_EQ(ParseAssigned("1-1-2"), Set({1, 2}));
}

TEST(DeviceLedgerParseAssigned, RefusesMalformedLabels) {
  for (const char* bad : {"", "-", "1-", "-1", "1--2", "1,2", "a", "1-a", "64",
                          "1-99999999999", " 1"}) {
    EXPECT_EQ(ParseAssigned(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(DeviceLedgerFormat, LabelAndAnnotationFormats) {
  EXPECT_EQ(AssignedLabel({0, 3, 5}), "0-3-5");
  EXPECT_EQ(AssignedAnnotation({0, 3, 5}), "0,3,5");
  EXPECT_EQ(AssignedLabel({7}), "7");
  // The longest label: 16 two-digit indices fit a label value (63 bytes).
  std::vector<int> widest;
  for (int i = kMaxDevices - kMaxRequest; i < kMaxDevices; ++i) {
    widest.push_back(i);
  }
  EXPECT_LE(AssignedLabel(widest).size(), 63u);
  EXPECT_EQ(ParseAssigned(AssignedLabel(widest)).value().count(),
            static_cast<size_t>(kMaxRequest));
}

TEST(DeviceLedgerNodeDevices, UnionOfLabelsSkipsBadLabelsAndMissingDevices) {
  NodeDevices d(4);
  d.AddPod("ns", "a", "0-1");
  d.AddPod("ns", "b", "1-2");      // overlaps a: counted once
  d.AddPod("ns", "c", "garbage");  // unreadable: marks nothing
  d.AddPod("ns", "d", "3-9");      // 9 does not exist on a 4-device node
  EXPECT_EQ(d.labelled(), Set({0, 1, 2, 3}));
  EXPECT_TRUE(d.Shows("ns", "a", Set({0, 1})));
  EXPECT_FALSE(d.Shows("ns", "a", Set({0})));
  EXPECT_FALSE(d.Shows("other", "a", Set({0, 1})));
  EXPECT_FALSE(d.Shows("ns", "c", Set({})));
  EXPECT_TRUE(d.Shows("ns", "d", Set({3, 9})));
}

TEST_F(DeviceLedgerTest, UsedIsLabelsUnionReservations) {
  NodeDevices d(4);
  d.AddPod("ns", "bound", "0");
  ASSERT_EQ(ledger.Reserve({"uid-a", "ns", "a"}, "n1", d, 2),
            (std::vector<int>{1, 2}));
  EXPECT_EQ(ledger.Used("n1", d), Set({0, 1, 2}));
  // Another node's reservations are not this node's.
  EXPECT_EQ(ledger.Used("n2", NodeDevices(4)), Set({}));
  // The next pod gets what is left.
  EXPECT_EQ(ledger.Reserve({"uid-b", "ns", "b"}, "n1", d, 1),
            (std::vector<int>{3}));
  EXPECT_EQ(ledger.Reserve({"uid-c", "ns", "c"}, "n1", d, 1), std::nullopt);
  EXPECT_EQ(ledger.InFlight(), 2u);
}

TEST_F(DeviceLedgerTest, APodBothLabelledAndReservedCountsOnce) {
  NodeDevices before(4);
  ASSERT_EQ(ledger.Reserve({"uid-a", "ns", "a"}, "n1", before, 2),
            (std::vector<int>{0, 1}));
  ASSERT_EQ(ledger.PreBind("uid-a"), (std::vector<int>{0, 1}));
  // The node now shows the pod with its label: 2 devices used, not 4.
  NodeDevices after(4);
  after.AddPod("ns", "a", "0-1");
  EXPECT_EQ(ledger.Used("n1", after).count(), 2u);
  // And the reservation is gone: the label carries it from now on.
  EXPECT_EQ(ledger.InFlight(), 0u);
}

TEST_F(DeviceLedgerTest,
       ReservationKeptWhileTheNodeShowsThePodWithoutItsLabel) {
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n1", NodeDevices(4), 2));
  // The scheduler's view has the pod (assumed) without the label yet, or
  // an older pod of the same name with other devices.
  NodeDevices d(4);
  d.AddPod("ns", "a", "2-3");
  EXPECT_EQ(ledger.Used("n1", d), Set({0, 1, 2, 3}));
  EXPECT_EQ(ledger.InFlight(), 1u);
}

TEST_F(DeviceLedgerTest, UnreserveReleases) {
  NodeDevices d(2);
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n1", d, 2));
  EXPECT_EQ(ledger.Reserve({"uid-b", "ns", "b"}, "n1", d, 1), std::nullopt);
  ledger.Unreserve("uid-a");
  EXPECT_EQ(ledger.Used("n1", d), Set({}));
  EXPECT_EQ(ledger.Reserve({"uid-b", "ns", "b"}, "n1", d, 1),
            (std::vector<int>{0}));
  // Unreserve is tolerant: unknown pods, twice.
  ledger.Unreserve("uid-a");
  ledger.Unreserve("never-reserved");
  EXPECT_EQ(ledger.InFlight(), 1u);
  // No PreBind without a reservation.
  EXPECT_EQ(ledger.PreBind("uid-a"), std::nullopt);
}

TEST_F(DeviceLedgerTest, ReserveAgainReplacesThePodsReservation) {
  NodeDevices d(4);
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n1", d, 2));
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n2", d, 1));
  EXPECT_EQ(ledger.Used("n1", d), Set({}));
  EXPECT_EQ(ledger.Used("n2", d), Set({0}));
  EXPECT_EQ(ledger.InFlight(), 1u);
}

TEST_F(DeviceLedgerTest, ReservationExpiresTtlAfterPreBind) {
  NodeDevices d(4);
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n1", d, 1));
  clock.now += minutes(5);  // waited in Permit
  ASSERT_EQ(ledger.PreBind("uid-a"), (std::vector<int>{0}));
  // The node keeps showing the pod without the label PreBind wrote (the
  // label was taken off, or the scheduler's view is stuck): the devices
  // come back once the TTL has run from PreBind.
  d.AddPod("ns", "a", std::nullopt);
  clock.now += Ledger::kTtl - seconds(1);
  EXPECT_EQ(ledger.Used("n1", d), Set({0}));
  clock.now += seconds(1);
  EXPECT_EQ(ledger.Used("n1", d), Set({}));
  EXPECT_EQ(ledger.InFlight(), 0u);
  EXPECT_EQ(ledger.Reserve({"uid-b", "ns", "b"}, "n1", d, 1),
            (std::vector<int>{0}));
}

TEST_F(DeviceLedgerTest, PreBoundReservationCountsWhileTheNodeShowsItsPod) {
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n1", NodeDevices(4), 2));
  ASSERT_TRUE(ledger.PreBind("uid-a"));
  // Assumed, not bound yet: shown without its label.
  NodeDevices assumed(4);
  assumed.AddPod("ns", "a", std::nullopt);
  EXPECT_EQ(ledger.Used("n1", assumed), Set({0, 1}));
  // Deleted (or left out of a preemption dry run's copy of the node):
  // free, and the next pod may have them.
  NodeDevices without(4);
  without.AddPod("ns", "other", std::nullopt);
  EXPECT_EQ(ledger.Used("n1", without), Set({}));
  EXPECT_EQ(ledger.Reserve({"uid-b", "ns", "b"}, "n1", without, 2),
            (std::vector<int>{0, 1}));
  // The reservation is kept: a dry run's copy is not the node.
  ledger.Unreserve("uid-b");
  EXPECT_EQ(ledger.InFlight(), 1u);
  EXPECT_EQ(ledger.Used("n1", assumed), Set({0, 1}));
}

TEST_F(DeviceLedgerTest, ReservationBeforePreBindCountsWithoutItsPod) {
  // A pod-group cycle reserves its members on one snapshot, which shows
  // none of them: the first member's devices stay taken for the second.
  NodeDevices snapshot(4);
  ASSERT_EQ(ledger.Reserve({"uid-a", "ns", "a"}, "n1", snapshot, 2),
            (std::vector<int>{0, 1}));
  EXPECT_EQ(ledger.Used("n1", snapshot), Set({0, 1}));
  EXPECT_EQ(ledger.Reserve({"uid-b", "ns", "b"}, "n1", snapshot, 2),
            (std::vector<int>{2, 3}));
}

TEST_F(DeviceLedgerTest, ReservationWithoutPreBindOutlivesTheLongestPermit) {
  NodeDevices d(4);
  ASSERT_TRUE(ledger.Reserve({"uid-a", "ns", "a"}, "n1", d, 1));
  clock.now += Ledger::kPermitMax;
  EXPECT_EQ(ledger.Used("n1", d), Set({0}));
  EXPECT_EQ(ledger.PreBind("uid-a"), (std::vector<int>{0}));
  // Without PreBind (the scheduler went away) it ends kPermitMax + kTtl
  // after Reserve.
  ASSERT_TRUE(ledger.Reserve({"uid-b", "ns", "b"}, "n1", d, 1));
  clock.now += Ledger::kPermitMax + Ledger::kTtl;
  EXPECT_EQ(ledger.InFlight(), 0u);
  EXPECT_EQ(ledger.PreBind("uid-b"), std::nullopt);
}

TEST_F(DeviceLedgerTest, AgeCountsFromConstruction) {
  EXPECT_EQ(ledger.Age(), Ledger::Clock::duration::zero());
  clock.now += seconds(7);
  EXPECT_EQ(ledger.Age(), seconds(7));
}

TEST(DeviceLedger, RestartRebuildsFromTheNodesPodsLabels) {
  FakeClock clock;
  NodeDevices d(4);
  {
    Ledger before(clock.fn());
    auto a = before.Reserve({"uid-a", "ns", "a"}, "n1", d, 2);
    auto b = before.Reserve({"uid-b", "ns", "b"}, "n1", d, 1);
    ASSERT_TRUE(a && b);
    before.PreBind("uid-a");
    before.PreBind("uid-b");
    d.AddPod("ns", "a", AssignedLabel(*a));
    d.AddPod("ns", "b", AssignedLabel(*b));
  }
  // A new plugin instance: no reservations, only the pods' labels.
  Ledger after(clock.fn());
  EXPECT_EQ(after.Used("n1", d), Set({0, 1, 2}));
  EXPECT_EQ(after.Reserve({"uid-c", "ns", "c"}, "n1", d, 2), std::nullopt);
  EXPECT_EQ(after.Reserve({"uid-c", "ns", "c"}, "n1", d, 1),
            (std::vector<int>{3}));
  // A pod the old instance reserved has nothing to write here.
  EXPECT_EQ(after.PreBind("uid-a"), std::nullopt);
}

TEST(DeviceLedger, ConcurrentReservesNeverShareAnIndex) {
  constexpr int kThreads = 8;
  constexpr int kPodsPerThread = 40;
  Ledger ledger;
  // Full count, no labels: every pod's devices come from the ledger alone.
  const NodeDevices d(kMaxDevices);
  std::mutex mu;
  std::vector<std::vector<int>> granted;
  std::atomic<int> refused{0};
  std::atomic<bool> overlap_seen{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPodsPerThread; ++i) {
        const std::string uid =
            "uid-" + std::to_string(t) + "-" + std::to_string(i);
        const int k = 1 + (i % 2);
        // Filter runs beside the Reserve calls of other pods.
        if (ledger.Used("n1", d).count() > static_cast<size_t>(kMaxDevices)) {
          overlap_seen = true;
        }
        const auto picked = ledger.Reserve({uid, "ns", uid}, "n1", d, k);
        if (!picked) {
          ++refused;
          continue;
        }
        std::lock_guard lock(mu);
        granted.push_back(*picked);
        // Free some again, as failed bindings do.
        if (i % 5 == 0) {
          ledger.Unreserve(uid);
          granted.pop_back();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(overlap_seen);
  std::set<int> taken;
  int total = 0;
  for (const auto& g : granted) {
    for (int i : g) {
      EXPECT_TRUE(taken.insert(i).second) << "index " << i << " given twice";
      ++total;
    }
  }
  EXPECT_EQ(ledger.Used("n1", d).count(), static_cast<size_t>(total));
  EXPECT_EQ(ledger.InFlight(), granted.size());
  // 320 pods asked for 480 devices of 64 (a fifth of them gave theirs
  // back): many were refused.
  EXPECT_GT(refused.load(), 0);
  // What is left is exactly what nobody holds.
  const int left = kMaxDevices - total;
  if (left > 0) {
    EXPECT_TRUE(ledger.Reserve({"uid-rest", "ns", "rest"}, "n1", d, left));
  }
  EXPECT_EQ(ledger.Reserve({"uid-more", "ns", "more"}, "n1", d, 1),
            std::nullopt);
}

}  // namespace
}  // namespace device_share
