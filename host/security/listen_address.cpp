#include "host/security/listen_address.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace schedplug::host {
namespace {

// True when something accepts connections on the socket at `path`.
bool socket_in_use(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  std::strncpy(addr.sun_path, p.c_str(), sizeof(addr.sun_path) - 1);
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr),
                                   sizeof(addr)) == 0;
  ::close(fd);
  return connected;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& flag) {
  ListenAddress out;
  std::string path;
  if (flag.rfind("unix://", 0) == 0) {
    path = flag.substr(7);
  } else if (flag.rfind("unix:", 0) == 0) {
    path = flag.substr(5);
  } else {
    if (flag.empty() || flag.find(':') == std::string::npos) {
      throw std::invalid_argument(
          "--listen \"" + flag +
          "\" is neither unix:///path/to.sock nor host:port");
    }
    out.grpc_uri = flag;
    return out;
  }
  if (path.empty()) {
    throw std::invalid_argument("--listen \"" + flag +
                                "\" names no socket path");
  }
  // sockaddr_un holds 107 bytes of path.
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw std::invalid_argument(
        "--listen \"" + flag +
        "\": the socket path is longer than the 107 "
        "bytes a unix socket allows; use a shorter one");
  }
  out.is_unix = true;
  out.socket_path = path;
  out.grpc_uri = "unix:" + path;
  return out;
}

void prepare_unix_socket(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      throw std::runtime_error("cannot create the socket directory " +
                               path.parent_path().string() + ": " +
                               ec.message());
    }
  }
  const auto status = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(status)) return;
  if (!std::filesystem::is_socket(status)) {
    throw std::runtime_error(path.string() +
                             " exists and is not a socket; remove it or "
                             "choose another --listen path");
  }
  if (socket_in_use(path)) {
    throw std::runtime_error("another process is already listening on " +
                             path.string() +
                             " (is another schedplug-host running?); stop it "
                             "or choose another --listen path");
  }
  std::filesystem::remove(path, ec);
  if (ec) {
    throw std::runtime_error("cannot remove the stale socket " + path.string() +
                             ": " + ec.message());
  }
}

}  // namespace schedplug::host
