// Fuzz target "frames": the fast path
// (host/transport/fastpath/fast_path_server.cpp), length-prefixed FastRequest
// frames on a unix socket, into a running host (HostApp with the fixture plugin
// FuzzFixture, as schedplug-host runs).
//
// The input is a program of frames. Each starts with a byte that says how
// the frame is made: most are a body of up to 64 KiB (a 2-byte length,
// then the body) sent with the right 4-byte header; one kind is a raw
// 4-byte header followed by whatever the input holds (a frame over
// --max-message-bytes, or one cut short by the end of the stream). A body
// that parses as a FastRequest whose call names session "fuzz" is given
// the host's real session, so the seeds reach the node table, the pod
// cycle and the chains, not only "unknown session".
//
// Oracles: on the connection, the host answers every complete request
// with exactly one FastResponse, in order, that parses (so every string
// in it is valid UTF-8), until an oversize frame, which it answers with
// RESOURCE_EXHAUSTED before closing; and after every input, a well-formed
// PreFilter on a new connection is answered OK: nothing an input did
// broke the host for the next caller.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "fuzz/fuzz_checks.hpp"
#include "host/app/host_app.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace host = schedplug::host;
namespace v1 = schedplug::v1;

namespace {

constexpr size_t kMaxMessageBytes = 1 << 20;

struct Host {
  std::filesystem::path dir;
  std::unique_ptr<host::HostApp> app;
  std::string session;
  std::string fast_socket;
};

Host& running_host() {
  static Host* h = [] {
    auto* out = new Host();
    char tmpl[] = "/tmp/schedplug-fuzz-frames-XXXXXX";
    SCHEDPLUG_FUZZ_CHECK(::mkdtemp(tmpl) != nullptr, "mkdtemp");
    out->dir = tmpl;
    std::ofstream(out->dir / "config.yaml")
        << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: FuzzFixture
)";
    host::HostOptions options;
    options.config = out->dir / "config.yaml";
    options.plugins =
        std::filesystem::path(SCHEDPLUG_FUZZ_FIXTURE).parent_path();
    options.listen = "unix://" + (out->dir / "host.sock").string();
    options.max_message_bytes = kMaxMessageBytes;
    options.watch = false;
    options.memory_trim_interval = std::chrono::milliseconds(0);
    std::ostringstream diagnostics;
    try {
      out->app = host::HostApp::start(options, diagnostics);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "the host did not start: %s\n%s\n", e.what(),
                   diagnostics.str().c_str());
      std::abort();
    }
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    request.set_client_id("fuzz-frames");
    v1::ProfilePlugins* profile = request.add_profiles();
    profile->set_scheduler_name("default-scheduler");
    profile->add_plugins("FuzzFixture");
    v1::HandshakeResponse response;
    grpc::ServerContext context;
    const grpc::Status status =
        out->app->service().Handshake(&context, &request, &response);
    SCHEDPLUG_FUZZ_CHECK(status.ok(), status.error_message());
    SCHEDPLUG_FUZZ_CHECK(!response.fast_path_socket().empty(),
                         "the host offers no fast path");
    out->session = response.session_id();
    // A name beside the host's socket, or a path.
    std::filesystem::path fast = response.fast_path_socket();
    if (fast.is_relative()) fast = out->dir / fast;
    out->fast_socket = fast.string();
    return out;
  }();
  return *h;
}

int connect_fast(const Host& h) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  SCHEDPLUG_FUZZ_CHECK(fd >= 0, "socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string& path = h.fast_socket;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  SCHEDPLUG_FUZZ_CHECK(
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0,
      "connect to the fast path " + path);
  return fd;
}

void write_all(int fd, const std::string& bytes) {
  for (size_t at = 0; at < bytes.size();) {
    // MSG_NOSIGNAL: the host closes after an oversize frame.
    const ssize_t n =
        ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

std::string framed(const std::string& body) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) {
    out[i] = static_cast<char>(body.size() >> (8 * i));
  }
  return out + body;
}

// The answers the host wrote until it closed the connection.
std::vector<v1::FastResponse> read_answers(int fd) {
  std::string stream;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's timer signal
    if (n <= 0) break;
    stream.append(buffer, static_cast<size_t>(n));
  }
  std::vector<v1::FastResponse> answers;
  size_t at = 0;
  while (at < stream.size()) {
    SCHEDPLUG_FUZZ_CHECK(stream.size() - at >= 4, "a cut answer header");
    uint32_t size = 0;
    for (int i = 3; i >= 0; --i) {
      size = size << 8 | static_cast<uint8_t>(stream[at + i]);
    }
    at += 4;
    SCHEDPLUG_FUZZ_CHECK(stream.size() - at >= size, "a cut answer");
    v1::FastResponse response;
    SCHEDPLUG_FUZZ_CHECK(
        response.ParseFromArray(stream.data() + at, static_cast<int>(size)),
        "an answer that does not parse");
    answers.push_back(std::move(response));
    at += size;
  }
  return answers;
}

// A PreFilter of one pod over the fixture's two nodes, on a connection of
// its own: the host must still serve it.
void check_still_serving(const Host& h) {
  v1::FastRequest request;
  v1::PreFilterRequest* call = request.mutable_pre_filter();
  call->set_session_id(h.session);
  call->set_scheduler_name("default-scheduler");
  call->mutable_pod()->set_name("after");
  call->mutable_pod()->set_namespace_("default");
  v1::NodeTableDelta* delta = call->mutable_delta();
  delta->set_full(true);
  delta->set_new_version(1);
  for (uint32_t i = 0; i < 2; ++i) {
    v1::Node* node = delta->add_upserts();
    node->set_index(i);
    node->set_name("n" + std::to_string(i));
    node->set_generation(1);
  }
  const int fd = connect_fast(h);
  write_all(fd, framed(request.SerializeAsString()));
  ::shutdown(fd, SHUT_WR);
  const auto answers = read_answers(fd);
  ::close(fd);
  SCHEDPLUG_FUZZ_CHECK(answers.size() == 1, "no answer to a good PreFilter");
  SCHEDPLUG_FUZZ_CHECK(answers[0].code() == 0,
                       "a good PreFilter failed: " + answers[0].message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Host& h = running_host();
  schedplug::fuzz::Bytes in(data, size);
  std::string stream;
  size_t complete = 0;    // complete, well-sized request frames
  bool oversize = false;  // a frame over the limit ends the connection
  while (!in.empty() && !oversize) {
    if (in.u8() % 16 == 0) {  // a raw header, and the bytes the input has
      const uint32_t claimed = in.u32();
      for (int i = 0; i < 4; ++i) {
        stream += static_cast<char>(claimed >> (8 * i));
      }
      if (claimed > kMaxMessageBytes) {
        oversize = true;
        break;
      }
      size_t got = 0;
      for (; got < claimed && !in.empty(); ++got) {
        stream += static_cast<char>(in.u8());
      }
      if (got < claimed) break;  // cut short: the stream ends inside it
      ++complete;
      continue;
    }
    const size_t high = in.u8();  // big-endian, read in order
    const size_t length = high << 8 | in.u8();
    std::string body;
    for (size_t i = 0; i < length && !in.empty(); ++i) {
      body += static_cast<char>(in.u8());
    }
    v1::FastRequest request;
    if (request.ParseFromString(body)) {
      const auto give_session = [&h](auto* call) {
        if (call->session_id() == "fuzz") call->set_session_id(h.session);
      };
      if (request.has_pre_filter()) give_session(request.mutable_pre_filter());
      if (request.has_pre_score()) give_session(request.mutable_pre_score());
      if (request.has_filter_nodes()) {
        give_session(request.mutable_filter_nodes());
      }
      if (request.has_notes()) give_session(request.mutable_notes());
      body = request.SerializeAsString();
    }
    stream += framed(body);
    ++complete;
  }

  const int fd = connect_fast(h);
  std::thread writer([fd, &stream] {
    write_all(fd, stream);
    ::shutdown(fd, SHUT_WR);
  });
  const auto answers = read_answers(fd);
  writer.join();
  ::close(fd);
  if (oversize) {
    SCHEDPLUG_FUZZ_CHECK(answers.size() == complete + 1,
                         "answers before an oversize frame");
    SCHEDPLUG_FUZZ_CHECK(answers.back().code() == 8,  // RESOURCE_EXHAUSTED
                         "an oversize frame answered with code " +
                             std::to_string(answers.back().code()));
  } else {
    SCHEDPLUG_FUZZ_CHECK(
        answers.size() == complete,
        "one answer per request: " + std::to_string(answers.size()) +
            " answers to " + std::to_string(complete) + " requests");
  }
  check_still_serving(h);
  return 0;
}
