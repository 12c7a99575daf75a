// Who is calling: a name for the peer of an RPC, so that limits can be
// kept per peer (--max-sessions-per-peer, docs/security.md).
//
//  - unix socket: "uid N", from the SO_PEERCRED credentials the
//    UnixListener read when it accepted the connection (gRPC itself only
//    knows the connection as "fd:N");
//  - TCP with a client certificate (mutual TLS): "TLS client NAME", the
//    certificate's subject alternative names or common name;
//  - other TCP: the address without its port ("ipv4:10.0.0.7").
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace grpc {
class ServerContext;
}

namespace schedplug::host {

class PeerIdentities {
 public:
  // The UnixListener accepted `fd` from a peer running as `uid` (only to
  // read, with `read_only`), and hands it to gRPC next. A later connection
  // reusing the number replaces the entry (the earlier one is closed by
  // then).
  void accepted(int fd, uid_t uid, bool read_only = false);
  // Whether the peer of a call may only read (--read-only-uid/-group).
  bool read_only(const grpc::ServerContext& context) const;

  // The peer of a call.
  std::string identify(const grpc::ServerContext& context) const;
  // The same from gRPC's peer string and TLS identity ("" when none);
  // separate for tests.
  std::string identify(const std::string& peer,
                       const std::string& tls_identity) const;

 private:
  mutable std::mutex mutex_;
  struct Peer {
    uid_t uid;
    bool read_only;
  };
  std::unordered_map<int, Peer> peers_;  // by fd
};

}  // namespace schedplug::host
