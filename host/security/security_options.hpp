// Who may talk to schedplug-host: the unix socket's permissions and peer
// check, and TLS for TCP. docs/security.md explains each flag.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace schedplug::host {

struct SecurityOptions {
  // --socket-group: the socket directory becomes 0750 and the socket 0660,
  // both owned by this group (a name or a number). Empty: 0700 and 0600.
  std::string socket_group;
  // --allow-uid: the uids whose connections are served on the unix
  // socket. Empty: only the host's own effective uid.
  std::vector<uid_t> allowed_uids;
  // --read-only-uid / --read-only-group: peers on the unix socket (by uid,
  // or by the group id their process runs with) that may only read: the
  // Explain and Status calls and the health check (`schedplug explain`,
  // `schedplug-host probe`), never the scheduler's calls. An uid of
  // allowed_uids keeps full access. Not on the fast-path socket.
  std::vector<uid_t> read_only_uids;
  std::vector<std::string> read_only_groups;
  // --tls-cert / --tls-key: the server certificate and key (PEM) for TCP.
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
  // --tls-client-ca: CA bundle (PEM); clients must present a certificate
  // it signed (mutual TLS).
  std::filesystem::path tls_client_ca;
  // --insecure-tcp: serve plaintext on a TCP --listen address anyway.
  bool insecure_tcp = false;
  // --plugin-sha256: a file of "SHA256  NAME.so" lines (sha256sum's
  // output); every plugin file must be listed with its digest.
  std::filesystem::path plugin_sha256;
};

}  // namespace schedplug::host
