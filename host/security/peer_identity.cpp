#include "host/security/peer_identity.hpp"

#include <grpcpp/security/auth_context.h>
#include <grpcpp/server_context.h>

#include <charconv>
#include <string_view>

namespace schedplug::host {

namespace {

// The descriptor of a unix-socket peer ("fd:N"); -1 for other peers.
int peer_fd(std::string_view peer) {
  if (!peer.starts_with("fd:")) return -1;
  int fd = -1;
  const auto [end, ec] =
      std::from_chars(peer.data() + 3, peer.data() + peer.size(), fd);
  return ec == std::errc() && end == peer.data() + peer.size() ? fd : -1;
}

}  // namespace

void PeerIdentities::accepted(int fd, uid_t uid, bool read_only) {
  std::lock_guard lock(mutex_);
  peers_[fd] = {uid, read_only};
}

bool PeerIdentities::read_only(const grpc::ServerContext& context) const {
  const int fd = peer_fd(context.peer());
  if (fd < 0) return false;
  std::lock_guard lock(mutex_);
  const auto it = peers_.find(fd);
  return it != peers_.end() && it->second.read_only;
}

std::string PeerIdentities::identify(const std::string& peer,
                                     const std::string& tls_identity) const {
  if (!tls_identity.empty()) return "TLS client " + tls_identity;
  const std::string_view p = peer;
  if (p.starts_with("fd:")) {
    if (const int fd = peer_fd(p); fd >= 0) {
      std::lock_guard lock(mutex_);
      if (auto it = peers_.find(fd); it != peers_.end()) {
        return "uid " + std::to_string(it->second.uid);
      }
    }
    return "unix socket peer " + peer;
  }
  if (p.starts_with("ipv4:") || p.starts_with("ipv6:")) {
    // "ipv4:10.0.0.7:53124", "ipv6:[::1]:53124": the port changes with
    // every connection, the address is the peer.
    const auto colon = p.rfind(':');
    if (colon != std::string_view::npos && colon > 5 &&
        p.find_first_not_of("0123456789", colon + 1) ==
            std::string_view::npos) {
      return std::string(p.substr(0, colon));
    }
  }
  return peer;
}

std::string PeerIdentities::identify(const grpc::ServerContext& context) const {
  std::string tls;
  if (const auto auth = context.auth_context();
      auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const grpc::string_ref& name : auth->GetPeerIdentity()) {
      if (!tls.empty()) tls += ",";
      tls.append(name.data(), name.size());
    }
  }
  return identify(context.peer(), tls);
}

}  // namespace schedplug::host
