#include "host/plugin/hook_watchdog.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

// One thread's slot. Written only by its thread; `seq` is odd while the
// thread is inside a hook, and changes on every entry and exit, so the
// watchdog tells "the same call is still running" from "another call".
struct Slot {
  std::atomic<uint64_t> seq{0};
  std::atomic<const PluginInstance*> plugin{nullptr};
  std::atomic<Hook> hook{Hook::kNone};
  std::atomic<bool> in_use{true};   // false once its thread ended
  std::atomic<bool> shadow{false};  // mark_shadow_thread()
};

namespace {

// Every slot ever made; slots of ended threads are reused. Never shrinks,
// and lives until exit (the watchdog may scan while threads end).
struct Slots {
  std::mutex mutex;
  std::vector<std::unique_ptr<Slot>> all;
};
Slots& slot_registry() {
  static Slots* s = new Slots();  // never destroyed: threads outlive statics
  return *s;
}

Slot* acquire_slot() {
  Slots& s = slot_registry();
  std::lock_guard lock(s.mutex);
  for (auto& slot : s.all) {
    bool free = false;
    if (slot->in_use.compare_exchange_strong(free, true)) {
      slot->shadow.store(false, std::memory_order_relaxed);
      return slot.get();
    }
  }
  s.all.push_back(std::make_unique<Slot>());
  return s.all.back().get();
}

// Gives the slot back when its thread ends.
struct ThreadSlot {
  Slot* slot = acquire_slot();
  ~ThreadSlot() { slot->in_use.store(false, std::memory_order_release); }
};

Slot* this_thread_slot() {
  thread_local ThreadSlot mine;
  return mine.slot;
}

}  // namespace

const char* hook_name(Hook hook) {
  switch (hook) {
    case Hook::kApplies:
      return "applies";
    case Hook::kFilter:
      return "filter";
    case Hook::kScore:
      return "score";
    case Hook::kNormalizeScore:
      return "normalize_score";
    case Hook::kPodBegin:
      return "pod_begin";
    case Hook::kPodEnd:
      return "pod_end";
    case Hook::kReserve:
      return "reserve";
    case Hook::kUnreserve:
      return "unreserve";
    case Hook::kPermit:
      return "permit";
    case Hook::kPreBind:
      return "pre_bind";
    case Hook::kPreEnqueue:
      return "pre_enqueue";
    case Hook::kNone:
      break;
  }
  return "(none)";
}

void mark_shadow_thread() {
  this_thread_slot()->shadow.store(true, std::memory_order_relaxed);
}

HookScope::HookScope(const PluginInstance* plugin, Hook hook) noexcept
    : slot_(this_thread_slot()),
      seq_(slot_->seq.load(std::memory_order_relaxed)) {
  slot_->plugin.store(plugin, std::memory_order_relaxed);
  slot_->hook.store(hook, std::memory_order_relaxed);
  // Hooks do not nest on one thread; should one ever, the outer call keeps
  // the slot and the inner one is not tracked.
  if (seq_ % 2 == 0) {
    slot_->seq.store(seq_ + 1, std::memory_order_release);
  } else {
    slot_ = nullptr;
  }
}

HookScope::~HookScope() {
  if (slot_ != nullptr) slot_->seq.store(seq_ + 2, std::memory_order_release);
}

std::string HungHook::message() const {
  return fmt::format(
      "plugin {} has been inside {}() for at least {:.1f} s, over the hard "
      "limit of {:.1f} s (--hook-hard-limit)",
      plugin, hook_name(hook), static_cast<double>(running.count()) / 1000,
      static_cast<double>(limit.count()) / 1000);
}

HookWatchdog::HookWatchdog(std::chrono::milliseconds limit,
                           std::function<void(const HungHook&)> on_hung)
    : limit_(limit), on_hung_(std::move(on_hung)) {
  thread_ = std::thread([this] { run(); });
}

HookWatchdog::~HookWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

size_t HookWatchdog::slots() {
  std::lock_guard lock(slot_registry().mutex);
  return slot_registry().all.size();
}

void HookWatchdog::run() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::clamp<std::chrono::milliseconds>(
      limit_ / 10, std::chrono::milliseconds(5),
      std::chrono::milliseconds(250));
  // What each slot was doing at the last scan, by slot address.
  struct Seen {
    const Slot* slot;
    uint64_t seq;
    Clock::time_point since;
    bool reported;
  };
  std::vector<Seen> seen;
  std::vector<Slot*> current;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    {
      Slots& s = slot_registry();
      std::lock_guard slots_lock(s.mutex);
      current.clear();
      for (auto& slot : s.all) current.push_back(slot.get());
    }
    seen.resize(current.size(), Seen{nullptr, 0, {}, false});
    const auto now = Clock::now();
    for (size_t i = 0; i < current.size(); ++i) {
      Slot& slot = *current[i];
      Seen& last = seen[i];
      const uint64_t seq = slot.seq.load(std::memory_order_acquire);
      if (last.slot != &slot || last.seq != seq) {
        last = {&slot, seq, now, false};
        continue;
      }
      if (seq % 2 == 0 || last.reported || now - last.since < limit_) continue;
      HungHook hung;
      const PluginInstance* plugin =
          slot.plugin.load(std::memory_order_relaxed);
      hung.hook = slot.hook.load(std::memory_order_relaxed);
      // Still the same call? Then plugin and hook belong to it.
      if (slot.seq.load(std::memory_order_acquire) != seq) continue;
      last.reported = true;
      hung.plugin = plugin != nullptr ? plugin->name() : "(unknown)";
      hung.running = std::chrono::duration_cast<std::chrono::milliseconds>(
          now - last.since);
      hung.limit = limit_;
      hung.shadow = slot.shadow.load(std::memory_order_relaxed);
      lock.unlock();
      on_hung_(hung);
      lock.lock();
      if (stopping_) return;
    }
  }
}

}  // namespace schedplug::host
