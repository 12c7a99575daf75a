#include "host/security/unix_listener.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "host/security/listen_address.hpp"
#include "host/security/peer_identity.hpp"

namespace schedplug::host {
namespace {

std::string errno_text(int err) { return std::system_category().message(err); }

std::string mode_text(mode_t mode) {
  return fmt::format("{:04o}", mode & 07777);
}

}  // namespace

gid_t resolve_group(const std::string& group) {
  if (!group.empty() && std::all_of(group.begin(), group.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return static_cast<gid_t>(std::stoul(group));
  }
  std::vector<char> buffer(16384);
  struct group entry {};
  struct group* found = nullptr;
  while (::getgrnam_r(group.c_str(), &entry, buffer.data(), buffer.size(),
                      &found) == ERANGE &&
         buffer.size() < (1u << 20)) {
    buffer.resize(buffer.size() * 4);
  }
  if (found == nullptr) {
    throw std::invalid_argument("--socket-group \"" + group +
                                "\": no such group; give an existing group "
                                "name or a numeric gid");
  }
  return found->gr_gid;
}

void secure_socket_directory(const std::filesystem::path& dir,
                             std::optional<gid_t> group) {
  const mode_t want = group ? 0750 : 0700;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    if (dir.has_parent_path()) {
      std::filesystem::create_directories(dir.parent_path(), ec);
    }
    if (::mkdir(dir.c_str(), want) != 0 && errno != EEXIST) {
      throw std::runtime_error("cannot create the socket directory " +
                               dir.string() + ": " + errno_text(errno));
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::runtime_error(dir.string() +
                             " (the socket's directory) is not a directory; "
                             "choose another --listen path");
  }
  if (st.st_uid == ::geteuid()) {
    // Ours: set the mode explicitly, the umask does not matter.
    if (group && ::chown(dir.c_str(), static_cast<uid_t>(-1), *group) != 0) {
      throw std::runtime_error(fmt::format(
          "cannot give the socket directory {} to group {} (--socket-group): "
          "{}; the host must be a member of that group",
          dir.string(), *group, errno_text(errno)));
    }
    if (::chmod(dir.c_str(), want) != 0) {
      throw std::runtime_error("cannot set the socket directory " +
                               dir.string() + " to mode " + mode_text(want) +
                               ": " + errno_text(errno));
    }
    return;
  }
  // Someone else's directory (e.g. /tmp): fine only if no one else can
  // replace our socket there.
  const bool writable_by_others = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  if (writable_by_others && !sticky) {
    throw std::runtime_error(fmt::format(
        "the socket directory {} is owned by uid {} with mode {}: other "
        "users could replace the host's socket there; point --listen at a "
        "subdirectory the host creates itself (e.g. unix://{}/host/host.sock), "
        "which it makes mode {}",
        dir.string(), st.st_uid, mode_text(st.st_mode), dir.string(),
        mode_text(want)));
  }
}

UnixListener::UnixListener(const std::filesystem::path& path,
                           const SecurityOptions& options,
                           prometheus::Registry* registry,
                           PeerIdentities* peers, bool read_only_peers)
    : path_(path), peers_(peers) {
  std::optional<gid_t> group;
  if (!options.socket_group.empty()) {
    group = resolve_group(options.socket_group);
  }
  allowed_ = options.allowed_uids;
  if (allowed_.empty()) allowed_.push_back(::geteuid());
  if (read_only_peers) {
    read_only_uids_ = options.read_only_uids;
    for (const std::string& g : options.read_only_groups) {
      try {
        read_only_gids_.push_back(resolve_group(g));
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string(e.what()) +
                                 " (--read-only-group)");
      }
    }
  }

  const auto dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  secure_socket_directory(dir, group);
  prepare_unix_socket(path);  // removes a stale socket, refuses one in use

  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    throw std::runtime_error("cannot create a unix socket: " +
                             errno_text(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr),
             sizeof(addr)) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    throw std::runtime_error("cannot bind the unix socket " + path.string() +
                             ": " + errno_text(err));
  }
  // No one can connect before listen(): set owner and mode first.
  const mode_t mode = group ? 0660 : 0600;
  if ((group && ::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) ||
      ::chmod(path.c_str(), mode) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    ::unlink(path.c_str());
    throw std::runtime_error("cannot set the owner or mode " + mode_text(mode) +
                             " of the socket " + path.string() + ": " +
                             errno_text(err));
  }
  if (::listen(listen_fd_, 128) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    ::unlink(path.c_str());
    throw std::runtime_error("cannot listen on the unix socket " +
                             path.string() + ": " + errno_text(err));
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (registry != nullptr) {
    refused_counter_ =
        &prometheus::BuildCounter()
             .Name("schedplug_refused_connections_total")
             .Help(
                 "Connections to the unix socket closed unserved because "
                 "the peer's uid is not allowed (--allow-uid).")
             .Register(*registry)
             .Add({});
  }
}

UnixListener::~UnixListener() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void UnixListener::start(grpc::Server* server) {
  start([server](int fd) { grpc::AddInsecureChannelFromFd(server, fd); });
}

void UnixListener::start(std::function<void(int fd)> serve) {
  serve_ = std::move(serve);
  thread_ = std::thread([this] { accept_loop(); });
}

void UnixListener::stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

UnixListener::Access UnixListener::access(uid_t uid, gid_t gid) const {
  const auto has = [](const auto& list, auto id) {
    return std::find(list.begin(), list.end(), id) != list.end();
  };
  if (has(allowed_, uid)) return Access::kFull;
  if (has(read_only_uids_, uid) || has(read_only_gids_, gid))
    return Access::kReadOnly;
  return Access::kRefused;
}

void UnixListener::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("unix socket {}: poll failed: {}; no longer accepting",
                    path_.string(), errno_text(errno));
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd =
        ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
        spdlog::warn("unix socket {}: accept failed: {}", path_.string(),
                     errno_text(errno));
      }
      continue;
    }
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
      spdlog::warn(
          "unix socket {}: cannot read the peer's credentials ({}); "
          "connection closed",
          path_.string(), errno_text(errno));
      ::close(fd);
      continue;
    }
    const Access granted = access(peer.uid, peer.gid);
    if (granted == Access::kRefused) {
      // Counted before the close: by the time the peer sees its connection
      // closed, the metric already shows the refusal.
      refused_.fetch_add(1);
      if (refused_counter_ != nullptr) refused_counter_->Increment();
      ::close(fd);
      bool first = false;
      {
        std::lock_guard lock(logged_mutex_);
        first = logged_uids_.insert(peer.uid).second;
      }
      std::string allowed_list;
      for (uid_t u : allowed_) {
        allowed_list += (allowed_list.empty() ? "" : ", ") + std::to_string(u);
      }
      if (first) {
        spdlog::warn(
            "refused a connection on {} from uid {} (pid {}): only uid(s) {} "
            "may connect; if this is the scheduler, run it as one of those or "
            "add --allow-uid={} (further refusals of this uid are only "
            "counted in schedplug_refused_connections_total)",
            path_.string(), peer.uid, peer.pid, allowed_list, peer.uid);
      } else {
        spdlog::trace("refused a connection on {} from uid {} (pid {})",
                      path_.string(), peer.uid, peer.pid);
      }
      continue;
    }
    // Debug, from -v 4: -v 2 adds only one line per call.
    spdlog::trace("connection on {} from uid {} (pid {}){}", path_.string(),
                  peer.uid, peer.pid,
                  granted == Access::kReadOnly ? ", read-only" : "");
    if (peers_ != nullptr)
      peers_->accepted(fd, peer.uid, granted == Access::kReadOnly);
    serve_(fd);
  }
}

}  // namespace schedplug::host
