// WatchSession: a stream the shim holds open for its session's life. It
// carries the host's identity at once and then a heartbeat, and it ends
// when the session does (evicted: FAILED_PRECONDITION) or the host does
// (UNAVAILABLE, or the connection closing with the process). That is how
// the shim learns at once that the answers it kept came from a host that
// is gone.
//
// The streams are gRPC callback reactors: an open watch holds no thread.
// One thread (started with the first watch) writes the heartbeats and ends
// the watches of evicted sessions.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <grpcpp/grpcpp.h>

#include "host/identity/host_identity.hpp"
#include "host/session/sessions.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

class SessionWatches {
 public:
  using Reactor = grpc::ServerWriteReactor<v1::SessionEvent>;

  SessionWatches(HostIdentity identity, std::chrono::milliseconds heartbeat);
  ~SessionWatches();
  SessionWatches(const SessionWatches&) = delete;
  SessionWatches& operator=(const SessionWatches&) = delete;

  // The reactor serving a WatchSession call for `session` (nullptr: the
  // host does not know `id`; the call ends with FAILED_PRECONDITION).
  // gRPC owns it until its OnDone.
  Reactor* open(std::shared_ptr<Session> session, const std::string& id);
  // Ends the watches of evicted sessions now rather than at the next
  // heartbeat. Thread-safe, never blocks on a stream.
  void sessions_ended();
  // The host's answers carry `identity` from now on (a reload swapped its
  // plugins): every watch sends it at once. Thread-safe, never blocks on a
  // stream.
  void identity_changed(HostIdentity identity);
  // Sends `decision` (about a pod waiting in profile
  // decision.scheduler_name) at once on the watch of every session whose
  // Handshake named that profile. Returns how many watches took it.
  // Thread-safe, never blocks on a stream.
  size_t waiting_pod_decided(const v1::WaitingPodDecision& decision);
  // Ends every watch with UNAVAILABLE and refuses new ones: call before
  // the gRPC server's Shutdown, which waits for open streams.
  void stop();
  size_t open_watches() const;

 private:
  class Watch;
  void run();
  void forget(const Watch* watch);

  HostIdentity current_identity() const;

  HostIdentity identity_;  // guarded by mutex_
  const std::chrono::milliseconds heartbeat_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  bool check_sessions_ = false;
  bool identity_changed_ = false;
  std::unordered_map<const Watch*, std::shared_ptr<Watch>> watches_;
  std::thread beats_;  // started with the first watch
};

}  // namespace schedplug::host
