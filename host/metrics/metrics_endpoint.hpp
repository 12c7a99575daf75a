// --metrics-listen: GET /metrics answered with HostMetrics::scrape(), on a
// small civetweb server. The host serves it itself rather than through
// prometheus-cpp's Exposer, whose own metrics break the conventions the
// host's follow (a latency summary in microseconds).
#pragma once

#include <memory>
#include <string>

class CivetServer;

namespace schedplug::host {

class HostMetrics;

class MetricsEndpoint {
 public:
  // Listens on `address` (host:port, as civetweb's listening_ports takes
  // it). Throws std::runtime_error naming the address when it cannot.
  MetricsEndpoint(const std::string& address, HostMetrics& metrics);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The port it listens on (the one chosen for a port of 0).
  int port() const;

 private:
  class Handler;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace schedplug::host
