// The fast path: PreFilter and PreScore as length-prefixed FastRequest /
// FastResponse frames on a unix socket of their own (schedplug.proto, "The
// fast path"). Each connection has one thread that reads a request, runs it
// on that thread through the same call pipeline as gRPC, and writes
// the answer: nothing is handed between threads on the way, and the shim's
// calling goroutine waits for the answer itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <list>
#include <mutex>
#include <thread>

namespace schedplug::host {

class CallPipeline;

class FastPathServer {
 public:
  // Frames over `max_message_bytes` are refused (RESOURCE_EXHAUSTED, then
  // the connection is closed); more than `max_connections` at once are
  // closed when accepted.
  FastPathServer(CallPipeline& pipeline, size_t max_message_bytes,
                 size_t max_connections);
  ~FastPathServer();
  FastPathServer(const FastPathServer&) = delete;
  FastPathServer& operator=(const FastPathServer&) = delete;

  // Serves an accepted connection (UnixListener checked its peer) on a
  // thread of its own; takes ownership of `fd`.
  void serve(int fd);
  // Ends every connection: a call in progress finishes and its answer is
  // written, then its connection closes. No connection is served after.
  void stop();
  size_t connections() const;

 private:
  struct Connection {
    int fd = -1;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void run(Connection& connection);
  // Joins and closes connections whose thread ended. Caller holds mutex_.
  void reap();

  CallPipeline& pipeline_;
  const size_t max_message_bytes_;
  const size_t max_connections_;
  mutable std::mutex mutex_;
  std::list<Connection> connections_;
  bool stopped_ = false;
};

}  // namespace schedplug::host
