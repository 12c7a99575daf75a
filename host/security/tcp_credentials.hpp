// Credentials for a TCP --listen address: TLS (optionally mutual) from
// --tls-cert/--tls-key/--tls-client-ca, or plaintext only with
// --insecure-tcp. Without either the host refuses to start.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "host/security/security_options.hpp"

namespace schedplug::host {

// Throws std::invalid_argument with a sentence naming the flags to set.
// `listen` is the --listen value (for messages).
std::shared_ptr<grpc::ServerCredentials> tcp_server_credentials(
    const SecurityOptions& options, const std::string& listen);

// TLS flags make sense only with a TCP --listen address; throws
// std::invalid_argument when they are given with a unix socket.
void check_unix_security_flags(const SecurityOptions& options);
// The reverse: the unix socket's flags given with a TCP --listen address.
// Throws std::invalid_argument.
void check_tcp_security_flags(const SecurityOptions& options);

// --metrics-listen: "PORT" or ":PORT" means 127.0.0.1:PORT (metrics are
// local unless an address is given); anything else is returned as is.
std::string metrics_address(const std::string& flag);

}  // namespace schedplug::host
