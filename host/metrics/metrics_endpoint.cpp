#include "host/metrics/metrics_endpoint.hpp"

#include <CivetServer.h>

#include <stdexcept>
#include <vector>

#include "host/metrics/host_metrics.hpp"

namespace schedplug::host {

class MetricsEndpoint::Handler : public CivetHandler {
 public:
  explicit Handler(HostMetrics& metrics) : metrics_(metrics) {}

  bool handleGet(CivetServer*, struct mg_connection* conn) override {
    const std::string body = metrics_.scrape();
    mg_printf(conn,
              "HTTP/1.1 200 OK\r\n"
              "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
              "Content-Length: %zu\r\n"
              "Connection: close\r\n\r\n",
              body.size());
    mg_write(conn, body.data(), body.size());
    return true;
  }

 private:
  HostMetrics& metrics_;
};

MetricsEndpoint::MetricsEndpoint(const std::string& address,
                                 HostMetrics& metrics)
    : handler_(std::make_unique<Handler>(metrics)) {
  const std::vector<std::string> options{"listening_ports", address,
                                         "num_threads", "2"};
  try {
    server_ = std::make_unique<CivetServer>(options);
  } catch (const CivetException& e) {
    throw std::runtime_error(std::string(e.what()) +
                             " (is the port in use, or the address not one "
                             "of this machine's?)");
  }
  server_->addHandler("/metrics", handler_.get());
}

int MetricsEndpoint::port() const {
  const std::vector<int> ports = server_->getListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

MetricsEndpoint::~MetricsEndpoint() {
  // Stop serving before the handler goes.
  if (server_) server_->close();
}

}  // namespace schedplug::host
