#include "host/transport/fastpath/fast_path_server.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "host/pipeline/call_context.hpp"
#include "host/pipeline/call_pipeline.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {
namespace {

constexpr char kTableVersionTrailer[] = "schedplug-table-version";

// A fast-path call's context: the deadline the request carried, and the
// table-version trailer kept for the answer.
class FastCallContext final : public CallContext {
 public:
  explicit FastCallContext(int64_t timeout_micros) {
    if (timeout_micros > 0) {
      deadline_ = std::chrono::system_clock::now() +
                  std::chrono::microseconds(timeout_micros);
    }
  }
  std::chrono::system_clock::time_point deadline() const override {
    return deadline_;
  }
  bool cancelled() const override { return false; }
  void add_trailer(const std::string& key, const std::string& value) override {
    if (key != kTableVersionTrailer) return;
    table_version_ = std::stoull(value);
    has_table_version_ = true;
  }
  void fill(v1::FastResponse& response) const {
    response.set_has_table_version(has_table_version_);
    if (has_table_version_) response.set_table_version(table_version_);
  }

 private:
  std::chrono::system_clock::time_point deadline_ =
      std::chrono::system_clock::time_point::max();
  bool has_table_version_ = false;
  uint64_t table_version_ = 0;
};

// Reads exactly `n` bytes; false at end of stream or on an error.
bool read_full(int fd, char* data, size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, data, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    data += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool write_full(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t put = ::send(fd, data, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

bool write_frame(int fd, const v1::FastResponse& response) {
  std::string frame(4, '\0');
  if (!response.AppendToString(&frame)) return false;
  const auto size = static_cast<uint32_t>(frame.size() - 4);
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>(size >> (8 * i));
  return write_full(fd, frame.data(), frame.size());
}

void set_error(v1::FastResponse& response, grpc::StatusCode code,
               std::string message) {
  response.set_code(static_cast<int32_t>(code));
  response.set_message(std::move(message));
}

// Runs one request through the pipeline; the answer goes into `response`.
void dispatch(CallPipeline& pipeline, const v1::FastRequest& request,
              v1::FastResponse& response) {
  FastCallContext context(request.timeout_micros());
  grpc::Status status;
  switch (request.call_case()) {
    case v1::FastRequest::kPreFilter:
      status = pipeline.pre_filter(context, request.pre_filter(),
                                   *response.mutable_pre_filter());
      break;
    case v1::FastRequest::kFilterNodes:
      // Answered like PreFilter.
      status = pipeline.filter_nodes(context, request.filter_nodes(),
                                     *response.mutable_pre_filter());
      break;
    case v1::FastRequest::kPreScore:
      status = pipeline.pre_score(context, request.pre_score(),
                                  *response.mutable_pre_score());
      break;
    case v1::FastRequest::kNotes:
      status = pipeline.note_cycles(context, request.notes(),
                                    *response.mutable_notes());
      break;
    case v1::FastRequest::kReserve:
      status = pipeline.reserve(context, request.reserve(),
                                *response.mutable_reserve());
      break;
    case v1::FastRequest::kUnreserve:
      status = pipeline.unreserve(context, request.unreserve(),
                                  *response.mutable_unreserve());
      break;
    case v1::FastRequest::kPermit:
      status = pipeline.permit(context, request.permit(),
                               *response.mutable_permit());
      break;
    default:
      set_error(response, grpc::StatusCode::INVALID_ARGUMENT,
                "fast path: the request names no call (pre_filter, "
                "filter_nodes, pre_score, notes, reserve, unreserve or "
                "permit); use a shim from the same schedplug release");
      return;
  }
  if (!status.ok()) {
    // As over gRPC: an error carries no answer, only the trailer.
    response.clear_answer();
    set_error(response, status.error_code(), status.error_message());
  }
  context.fill(response);
}

}  // namespace

FastPathServer::FastPathServer(CallPipeline& pipeline, size_t max_message_bytes,
                               size_t max_connections)
    : pipeline_(pipeline),
      max_message_bytes_(max_message_bytes),
      max_connections_(max_connections) {}

FastPathServer::~FastPathServer() { stop(); }

void FastPathServer::serve(int fd) {
  std::lock_guard lock(mutex_);
  reap();
  if (stopped_ || connections_.size() >= max_connections_) {
    if (!stopped_) {
      spdlog::warn(
          "fast path: refused a connection, {} are open already (one per "
          "scheduling goroutine is expected); the shim falls back to gRPC",
          connections_.size());
    }
    ::close(fd);
    return;
  }
  // The connection thread blocks in read(2) between calls.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  Connection& connection = connections_.emplace_back();
  connection.fd = fd;
  connection.thread = std::thread([this, &connection] {
    run(connection);
    // The peer sees the end now; the fd is closed when the thread is
    // joined, so that its number is not reused while stop() may use it.
    ::shutdown(connection.fd, SHUT_RDWR);
    connection.done.store(true);
  });
}

void FastPathServer::reap() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->done.load()) {
      ++it;
      continue;
    }
    it->thread.join();
    ::close(it->fd);
    it = connections_.erase(it);
  }
}

void FastPathServer::stop() {
  std::list<Connection> ending;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    // The reading side only: a call in progress still writes its answer.
    for (Connection& c : connections_) ::shutdown(c.fd, SHUT_RD);
    ending.splice(ending.end(), connections_);
  }
  for (Connection& c : ending) {
    c.thread.join();
    ::close(c.fd);
  }
}

size_t FastPathServer::connections() const {
  std::lock_guard lock(mutex_);
  size_t open = 0;
  for (const Connection& c : connections_) open += c.done.load() ? 0 : 1;
  return open;
}

void FastPathServer::run(Connection& connection) {
  const int fd = connection.fd;
  std::string body;
  v1::FastRequest request;
  v1::FastResponse response;
  for (;;) {
    unsigned char header[4];
    if (!read_full(fd, reinterpret_cast<char*>(header), sizeof(header))) {
      return;  // the shim closed the connection, or stop()
    }
    const uint32_t size = uint32_t{header[0]} | uint32_t{header[1]} << 8 |
                          uint32_t{header[2]} << 16 | uint32_t{header[3]} << 24;
    response.Clear();
    if (size > max_message_bytes_) {
      set_error(response, grpc::StatusCode::RESOURCE_EXHAUSTED,
                fmt::format("fast path: a request of {} bytes is over "
                            "--max-message-bytes ({}); connection closed",
                            size, max_message_bytes_));
      spdlog::warn("{}", response.message());
      write_frame(fd, response);
      return;
    }
    body.resize(size);
    if (!read_full(fd, body.data(), size)) return;
    if (!request.ParseFromString(body)) {
      set_error(response, grpc::StatusCode::INVALID_ARGUMENT,
                fmt::format("fast path: a frame of {} bytes is not a "
                            "schedplug.v1.FastRequest; use a shim from the "
                            "same schedplug release",
                            size));
      spdlog::warn("{}", response.message());
    } else {
      dispatch(pipeline_, request, response);
    }
    if (!write_frame(fd, response)) return;
  }
}

}  // namespace schedplug::host
