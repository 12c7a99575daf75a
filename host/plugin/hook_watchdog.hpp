// Notices a plugin hook that never returns.
//
// Every thread that calls plugin hooks owns a slot saying which hook of
// which plugin it is in. Entering and leaving a hook are a few stores to
// the thread's own slot (no clock read, no lock, no allocation), so the
// hot path of 5000 filter calls per pod stays cheap. One watchdog thread
// scans the slots a few times per limit; a slot that stays inside the same
// call for longer than the limit is reported once. schedplug-host then
// turns NOT_SERVING and exits non-zero, so that the kubelet restarts it: a
// restarted sidecar beats a wedged one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace schedplug::host {

class PluginInstance;

// The hooks the request path calls (create, destroy and refresh run
// elsewhere; refresh has its own hang log in host/refresh).
enum class Hook : uint8_t {
  kNone = 0,
  kApplies,
  kFilter,
  kScore,
  kNormalizeScore,
  kPodBegin,
  kPodEnd,
  kReserve,
  kUnreserve,
  kPermit,
  kPreBind,
  kPreEnqueue,
};
// "filter", "score", ... as plugin.h names the hook.
const char* hook_name(Hook hook);

// Marks the calling thread as one that runs shadow candidates
// (host/shadow/): a hook of it past the limit is reported with
// HungHook::shadow set, which the host answers by abandoning the
// candidates instead of exiting, since no live answer waits for them.
void mark_shadow_thread();

// Marks the calling thread as inside `hook` of `plugin` for its lifetime.
class HookScope {
 public:
  HookScope(const PluginInstance* plugin, Hook hook) noexcept;
  ~HookScope();
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

 private:
  struct Slot* slot_;
  uint64_t seq_;
};

struct HungHook {
  std::string plugin;
  Hook hook = Hook::kNone;
  // At least this long in the one call (measured from the first scan that
  // saw it, so the real time is up to one scan interval longer).
  std::chrono::milliseconds running{0};
  std::chrono::milliseconds limit{0};
  // On a thread mark_shadow_thread() marked.
  bool shadow = false;
  // "plugin SleepyFilter has been inside filter() for at least 2.1 s, over
  // the hard limit of 2 s (--hook-hard-limit)"
  std::string message() const;
};

class HookWatchdog {
 public:
  // Scans every slot about ten times per `limit` and calls `on_hung` (on
  // the watchdog thread) once for each call that stays in one hook longer
  // than `limit`.
  HookWatchdog(std::chrono::milliseconds limit,
               std::function<void(const HungHook&)> on_hung);
  ~HookWatchdog();  // stops the thread
  HookWatchdog(const HookWatchdog&) = delete;
  HookWatchdog& operator=(const HookWatchdog&) = delete;

  // How many threads have a slot (threads that called a hook so far).
  static size_t slots();

 private:
  void run();

  const std::chrono::milliseconds limit_;
  std::function<void(const HungHook&)> on_hung_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace schedplug::host
