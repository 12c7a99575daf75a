#include "host/session/session_watch.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace schedplug::host {

// One WatchSession stream. At most one write is in flight; an end asked
// for meanwhile waits for it. gRPC's calls (StartWrite, Finish) are made
// outside `mutex_`, so a reaction run on the same thread cannot deadlock.
class SessionWatches::Watch final : public SessionWatches::Reactor {
 public:
  Watch(SessionWatches& hub, std::shared_ptr<Session> session)
      : hub_(hub), session_(std::move(session)) {}

  const std::shared_ptr<Session>& session() const { return session_; }

  // Sends the identity and the heartbeat (and the decisions queued); while
  // a write is in flight, as soon as it is done (a new identity must not
  // wait for the next beat).
  void beat() {
    const HostIdentity identity = hub_.current_identity();
    {
      std::lock_guard lock(mutex_);
      if (ending_) return;
      if (writing_) {
        beat_pending_ = true;
        return;
      }
      writing_ = true;
      event_.Clear();
      identity.to_proto(*event_.mutable_identity());
      event_.set_heartbeat_ms(static_cast<uint32_t>(hub_.heartbeat_.count()));
      for (v1::WaitingPodDecision& d : decisions_)
        *event_.add_waiting_pods() = std::move(d);
      decisions_.clear();
    }
    StartWrite(&event_);
  }

  // Queues `decision` and sends it with the next write, which begins now
  // unless one is in flight. False once the watch is ending.
  bool decided(const v1::WaitingPodDecision& decision) {
    {
      std::lock_guard lock(mutex_);
      if (ending_ || pending_end_) return false;
      decisions_.push_back(decision);
      if (writing_) {
        beat_pending_ = true;
        return true;
      }
    }
    beat();
    return true;
  }

  void end(grpc::Status status) {
    {
      std::lock_guard lock(mutex_);
      if (ending_) return;
      if (writing_) {
        pending_end_ = std::move(status);
        return;
      }
      ending_ = true;
    }
    Finish(status);
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> finish;
    bool beat_again = false;
    {
      std::lock_guard lock(mutex_);
      writing_ = false;
      beat_again = std::exchange(beat_pending_, false);
      if (!ok && !pending_end_) {
        pending_end_ = grpc::Status(grpc::StatusCode::CANCELLED,
                                    "the watch's client went away");
      }
      if (pending_end_ && !ending_) {
        ending_ = true;
        finish = std::move(pending_end_);
      }
    }
    if (finish) {
      Finish(*finish);
      return;
    }
    if (beat_again) beat();
  }

  void OnCancel() override {
    end({grpc::StatusCode::CANCELLED, "the watch's client went away"});
  }

  void OnDone() override { hub_.forget(this); }

 private:
  SessionWatches& hub_;
  const std::shared_ptr<Session> session_;
  std::mutex mutex_;
  bool writing_ = false;
  bool ending_ = false;
  bool beat_pending_ = false;  // asked for while a write was in flight
  std::optional<grpc::Status> pending_end_;
  // Waiting-pod decisions for the next write.
  std::vector<v1::WaitingPodDecision> decisions_;
  v1::SessionEvent event_;  // the write in flight reads it
};

namespace {

// A reactor that ends its call at once (unknown session, host stopping).
class Refusal final : public SessionWatches::Reactor {
 public:
  explicit Refusal(grpc::Status status) { Finish(status); }
  void OnDone() override { delete this; }
};

grpc::Status session_gone(const std::string& id) {
  return {grpc::StatusCode::FAILED_PRECONDITION,
          "unknown session \"" + id +
              "\": the host restarted or the session was dropped; handshake "
              "again and send the full node table"};
}

}  // namespace

SessionWatches::SessionWatches(HostIdentity identity,
                               std::chrono::milliseconds heartbeat)
    : identity_(identity),
      heartbeat_(heartbeat.count() > 0 ? heartbeat
                                       : std::chrono::milliseconds(2000)) {}

SessionWatches::~SessionWatches() { stop(); }

SessionWatches::Reactor* SessionWatches::open(std::shared_ptr<Session> session,
                                              const std::string& id) {
  if (session == nullptr || session->evicted()) {
    return new Refusal(session_gone(id));
  }
  auto watch = std::make_shared<Watch>(*this, session);
  {
    std::lock_guard lock(mutex_);
    if (stopped_) {
      return new Refusal({grpc::StatusCode::UNAVAILABLE,
                          "the host is shutting down; handshake with the "
                          "next one"});
    }
    watches_.emplace(watch.get(), watch);
    if (!beats_.joinable()) beats_ = std::thread([this] { run(); });
  }
  watch->beat();  // the identity at once
  return watch.get();
}

void SessionWatches::forget(const Watch* watch) {
  std::shared_ptr<Watch> last;  // destroyed outside the lock
  std::lock_guard lock(mutex_);
  if (auto it = watches_.find(watch); it != watches_.end()) {
    last = std::move(it->second);
    watches_.erase(it);
  }
}

HostIdentity SessionWatches::current_identity() const {
  std::lock_guard lock(mutex_);
  return identity_;
}

void SessionWatches::identity_changed(HostIdentity identity) {
  {
    std::lock_guard lock(mutex_);
    identity_ = identity;
    identity_changed_ = true;
  }
  wake_.notify_one();
}

void SessionWatches::sessions_ended() {
  {
    std::lock_guard lock(mutex_);
    check_sessions_ = true;
  }
  wake_.notify_one();
}

size_t SessionWatches::waiting_pod_decided(
    const v1::WaitingPodDecision& decision) {
  std::vector<std::shared_ptr<Watch>> watches;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return 0;
    for (const auto& [_, watch] : watches_) {
      const std::vector<std::string>& profiles = watch->session()->profiles;
      if (std::find(profiles.begin(), profiles.end(),
                    decision.scheduler_name()) != profiles.end())
        watches.push_back(watch);
    }
  }
  size_t sent = 0;
  for (const auto& watch : watches) {
    if (!watch->session()->evicted() && watch->decided(decision)) ++sent;
  }
  return sent;
}

size_t SessionWatches::open_watches() const {
  std::lock_guard lock(mutex_);
  return watches_.size();
}

void SessionWatches::run() {
  auto next_beat = std::chrono::steady_clock::now() + heartbeat_;
  std::unique_lock lock(mutex_);
  while (!stopped_) {
    wake_.wait_until(lock, next_beat, [this] {
      return stopped_ || check_sessions_ || identity_changed_;
    });
    if (stopped_) break;
    const bool on_time = std::chrono::steady_clock::now() >= next_beat;
    if (on_time) next_beat += heartbeat_;
    // A new identity goes out at once, as a beat.
    const bool beat = on_time || identity_changed_;
    identity_changed_ = false;
    check_sessions_ = false;
    std::vector<std::shared_ptr<Watch>> watches;
    watches.reserve(watches_.size());
    for (const auto& [_, watch] : watches_) watches.push_back(watch);
    lock.unlock();
    for (const auto& watch : watches) {
      if (watch->session()->evicted()) {
        watch->end(session_gone(watch->session()->id));
      } else if (beat) {
        watch->beat();
      }
    }
    watches.clear();
    lock.lock();
  }
}

void SessionWatches::stop() {
  std::vector<std::shared_ptr<Watch>> watches;
  {
    std::lock_guard lock(mutex_);
    if (stopped_ && !beats_.joinable()) return;
    stopped_ = true;
    for (const auto& [_, watch] : watches_) watches.push_back(watch);
  }
  wake_.notify_one();
  if (beats_.joinable()) beats_.join();
  for (const auto& watch : watches) {
    watch->end({grpc::StatusCode::UNAVAILABLE,
                "the host is shutting down; handshake with the next one"});
  }
  if (!watches.empty()) {
    spdlog::info("ended {} session watch{} (shutting down)", watches.size(),
                 watches.size() == 1 ? "" : "es");
  }
}

}  // namespace schedplug::host
