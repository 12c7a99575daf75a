// The host's unix socket, owned by the host rather than by gRPC so that
// every connection is checked before gRPC sees a byte of it:
//  - the socket's directory is 0700 (0750 with --socket-group) and the
//    socket 0600 (0660), set explicitly, whatever the umask;
//  - each accepted connection's peer credentials (SO_PEERCRED) are checked
//    against the allowed uids; a refused connection is closed at once,
//    logged once per peer uid (with its pid) and counted in
//    schedplug_refused_connections_total.
// Accepted connections are handed to the gRPC server with
// grpc::AddInsecureChannelFromFd, or to another server (the fast path).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/security/security_options.hpp"

namespace grpc {
class Server;
}
namespace prometheus {
class Counter;
class Registry;
}  // namespace prometheus

namespace schedplug::host {

class PeerIdentities;

// "--socket-group": a group name or number. Throws std::invalid_argument
// naming the flag when no such group exists.
gid_t resolve_group(const std::string& group);

// Creates (or tightens) the socket's directory: 0700, or 0750 owned by
// `group`. An existing directory the host does not own is accepted only
// when no one else can replace files in it (not writable by group or
// others, or sticky like /tmp). Throws std::runtime_error with what to do.
void secure_socket_directory(const std::filesystem::path& dir,
                             std::optional<gid_t> group);

class UnixListener {
 public:
  // Secures the directory, removes a stale socket, binds and listens.
  // Throws std::runtime_error. Each served connection's uid is told to
  // `peers` (when set), which names the peers of calls.
  // Read-only peers (--read-only-uid/-group) are served only with
  // `read_only_peers` (the gRPC socket, not the fast path), and told to
  // `peers` as such.
  UnixListener(const std::filesystem::path& path,
               const SecurityOptions& options, prometheus::Registry* registry,
               PeerIdentities* peers = nullptr, bool read_only_peers = false);
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  // Starts the accept thread; allowed connections go to `server`.
  void start(grpc::Server* server);
  // The same, handing each allowed connection's fd to `serve`, which owns
  // it from then on.
  void start(std::function<void(int fd)> serve);
  // Stops accepting (connections already handed over stay with gRPC).
  void stop();

  const std::vector<uid_t>& allowed_uids() const { return allowed_; }
  uint64_t refused() const { return refused_.load(); }

 private:
  enum class Access { kRefused, kFull, kReadOnly };
  void accept_loop();
  Access access(uid_t uid, gid_t gid) const;

  std::filesystem::path path_;
  std::vector<uid_t> allowed_;
  std::vector<uid_t> read_only_uids_;
  std::vector<gid_t> read_only_gids_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() wakes the accept thread
  std::function<void(int fd)> serve_;
  PeerIdentities* peers_ = nullptr;
  std::thread thread_;
  std::atomic<uint64_t> refused_{0};
  prometheus::Counter* refused_counter_ = nullptr;
  std::mutex logged_mutex_;
  std::set<uid_t> logged_uids_;  // refused peers already logged
};

}  // namespace schedplug::host
