// The --listen flag: "unix:///run/schedplug/host.sock" (the default, as the
// shim's SCHEDPLUG_HOST), "unix:relative.sock", or TCP "host:port".
#pragma once

#include <filesystem>
#include <string>

namespace schedplug::host {

struct ListenAddress {
  bool is_unix = false;
  std::filesystem::path socket_path;  // when is_unix
  std::string grpc_uri;               // what grpc::ServerBuilder takes
};

// Throws std::invalid_argument with a sentence naming the flag.
ListenAddress parse_listen_address(const std::string& flag);

// Creates the socket's directory and removes a stale socket file left by a
// host that died. Throws std::runtime_error when another process is
// listening there or the path is not a socket.
void prepare_unix_socket(const std::filesystem::path& path);

}  // namespace schedplug::host
