// What a handler of host_service.cpp needs of the call it serves, whichever
// transport carried it: gRPC (GrpcCallContext below) or the fast-path
// socket (fast_path_server.cpp), or none (InProcessCallContext).
#pragma once

#include <chrono>
#include <string>

#include <grpcpp/server_context.h>

namespace schedplug::host {

class CallContext {
 public:
  virtual ~CallContext() = default;
  // The caller's deadline; time_point::max() when it set none.
  virtual std::chrono::system_clock::time_point deadline() const = 0;
  // The caller gave up on the call (only gRPC can tell).
  virtual bool cancelled() const = 0;
  // Trailing metadata, sent after the answer or with the error.
  virtual void add_trailer(const std::string& key,
                           const std::string& value) = 0;
};

class GrpcCallContext final : public CallContext {
 public:
  explicit GrpcCallContext(grpc::ServerContext* context) : context_(context) {}
  std::chrono::system_clock::time_point deadline() const override {
    return context_->deadline();
  }
  bool cancelled() const override { return context_->IsCancelled(); }
  void add_trailer(const std::string& key, const std::string& value) override {
    context_->AddTrailingMetadata(key, value);
  }

 private:
  grpc::ServerContext* context_;
};

// A call made in-process, with no caller behind it (`schedplug replay`, a
// table restored from a recording): no deadline (the plugins' own timeouts
// still apply), nobody to cancel, trailers nobody reads.
class InProcessCallContext final : public CallContext {
 public:
  std::chrono::system_clock::time_point deadline() const override {
    return std::chrono::system_clock::time_point::max();
  }
  bool cancelled() const override { return false; }
  void add_trailer(const std::string&, const std::string&) override {}
};

}  // namespace schedplug::host
