#include "host/security/tcp_credentials.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <grpcpp/security/server_credentials.h>
#include <spdlog/spdlog.h>

namespace schedplug::host {
namespace {

std::string read_pem(const std::filesystem::path& file, const char* flag) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().find("-----BEGIN") == std::string::npos) {
    throw std::invalid_argument(std::string(flag) + " " + file.string() +
                                ": cannot read a PEM file there; check the "
                                "path and that it holds PEM text "
                                "(-----BEGIN ...)");
  }
  return text.str();
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> tcp_server_credentials(
    const SecurityOptions& options, const std::string& listen) {
  const bool has_cert = !options.tls_cert.empty();
  const bool has_key = !options.tls_key.empty();
  if (has_cert != has_key) {
    throw std::invalid_argument(
        "--tls-cert and --tls-key go together: give both (the server "
        "certificate and its private key, PEM)");
  }
  if (!has_cert) {
    if (!options.tls_client_ca.empty()) {
      throw std::invalid_argument(
          "--tls-client-ca needs --tls-cert and --tls-key: mutual TLS is TLS "
          "with client certificates");
    }
    if (!options.insecure_tcp) {
      throw std::invalid_argument(
          "--listen " + listen +
          " is a TCP address, and TCP is served only with TLS: give "
          "--tls-cert and --tls-key (and --tls-client-ca so that only the "
          "scheduler's shim, holding a client certificate, gets in), or use "
          "a unix socket (unix:///run/schedplug/host.sock); --insecure-tcp "
          "serves plaintext to anyone who can reach the port");
    }
    spdlog::warn(
        "--insecure-tcp: serving plaintext gRPC on {}; anyone who can reach "
        "it can open sessions and list the plugins; use TLS with "
        "--tls-client-ca or a unix socket outside tests",
        listen);
    return grpc::InsecureServerCredentials();
  }
  if (options.insecure_tcp) {
    throw std::invalid_argument(
        "--insecure-tcp contradicts --tls-cert/--tls-key; drop one of them");
  }
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({read_pem(options.tls_key, "--tls-key"),
                                    read_pem(options.tls_cert, "--tls-cert")});
  if (!options.tls_client_ca.empty()) {
    ssl.pem_root_certs = read_pem(options.tls_client_ca, "--tls-client-ca");
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  } else {
    spdlog::warn(
        "TLS on {} without --tls-client-ca: the connection is encrypted, but "
        "any client can open sessions; add --tls-client-ca for mutual TLS",
        listen);
    ssl.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  }
  return grpc::SslServerCredentials(ssl);
}

void check_unix_security_flags(const SecurityOptions& options) {
  if (!options.tls_cert.empty() || !options.tls_key.empty() ||
      !options.tls_client_ca.empty() || options.insecure_tcp) {
    throw std::invalid_argument(
        "--tls-cert, --tls-key, --tls-client-ca and --insecure-tcp apply to "
        "a TCP --listen address only; a unix socket is protected by its "
        "mode and --allow-uid instead");
  }
}

void check_tcp_security_flags(const SecurityOptions& options) {
  if (!options.read_only_uids.empty() || !options.read_only_groups.empty() ||
      !options.allowed_uids.empty() || !options.socket_group.empty()) {
    throw std::invalid_argument(
        "--allow-uid, --socket-group, --read-only-uid and --read-only-group "
        "apply to a unix --listen socket only; on TCP, clients are who "
        "their TLS certificates say (--tls-client-ca)");
  }
}

std::string metrics_address(const std::string& flag) {
  const std::string port = flag.starts_with(":") ? flag.substr(1) : flag;
  if (!port.empty() && std::all_of(port.begin(), port.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return "127.0.0.1:" + port;
  }
  return flag;
}

}  // namespace schedplug::host
