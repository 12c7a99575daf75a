// schedplug-host-memory-soak: does the host's memory stay flat when the same
// workload runs again and again on one session?
//
// Starts the real schedplug-host binary (so the figures are the host's
// alone, not a test client's), opens one session, and runs the same
// workload --iterations times on it: a full node table of --nodes nodes (a
// resync), --prefilters PreFilter calls each with a one-node delta, and
// --prescores PreScore calls over a tenth of the nodes. After each
// iteration it scrapes the host's /metrics and prints the host's resident
// memory and malloc's view of the heap: in use, and free (mallinfo2's
// fordblks, which still counts freed chunks whose pages malloc_trim gave
// back to the system, so RSS is the figure that shows what is kept).
//
//   build/host/tests/server/schedplug-host-memory-soak --iterations 12
//   MALLOC_ARENA_MAX=8 build/host/tests/server/schedplug-host-memory-soak
//
// Extra host flags go after "--". The environment is passed to the host.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The value of an unlabelled series in Prometheus text; -1 if absent.
double metric(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + " ", 0) == 0) {
      return std::stod(line.substr(name.size() + 1));
    }
  }
  return -1;
}

double mib(double bytes) { return bytes / (1 << 20); }

v1::Pod soak_pod(RandomCluster& rnd, bool selector) {
  v1::Pod p = rnd.pod();
  if (!selector) p.clear_node_selector();
  return p;
}

struct Options {
  int iterations = 12;
  uint32_t nodes = 5000;
  int prefilters = 200;
  int prescores = 50;
  int settle_ms = 1500;
  std::vector<std::string> host_args;
};

int run(const Options& o) {
  TempDir dir;
  const auto config = write_test_config(dir.path());
  const auto socket = dir.path() / "host.sock";
  const auto log = dir.path() / "host.log";
  const int port = free_loopback_port();
  std::vector<std::string> args = {SCHEDPLUG_HOST_BINARY,
                                   "--config",
                                   config.string(),
                                   "--plugins",
                                   test_plugin_dir().string(),
                                   "--listen",
                                   "unix://" + socket.string(),
                                   "--metrics-listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--max-message-bytes",
                                   std::to_string(256 << 20)};
  args.insert(args.end(), o.host_args.begin(), o.host_args.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::dup2(fd, 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxSendMessageSize(256 << 20);
  channel_args.SetMaxReceiveMessageSize(256 << 20);
  auto stub = v1::Host::NewStub(grpc::CreateCustomChannel(
      "unix:" + socket.string(), grpc::InsecureChannelCredentials(),
      channel_args));
  std::string session;
  for (int i = 0; i < 500 && session.empty(); ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 1s);
    v1::HandshakeResponse response;
    if (stub->Handshake(&context, test_handshake_request(), &response).ok()) {
      session = response.session_id();
    } else {
      std::this_thread::sleep_for(20ms);
    }
  }
  auto stop = [&] {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  };
  if (session.empty()) {
    std::ifstream in(log);
    std::cerr << "the host did not start:\n" << in.rdbuf();
    stop();
    return 1;
  }
  const std::string before = http_get_metrics(port);
  for (const char* name :
       {"process_resident_memory_bytes", "schedplug_heap_in_use_bytes",
        "schedplug_heap_free_bytes"}) {
    if (metric(before, name) < 0) {
      std::cerr << "the host's /metrics on port " << port << " has no " << name
                << ":\n"
                << before << "\n";
      stop();
      return 1;
    }
  }
  std::printf(
      "nodes %u, per iteration: 1 full table + %d PreFilter (one-node delta) "
      "+ %d PreScore (%u nodes), one session\n",
      o.nodes, o.prefilters, o.prescores, o.nodes / 10);
  std::printf(
      "MiB; 'RSS' is read right after the workload, the other columns %d ms "
      "later (the host's memory trimmer runs once a second)\n",
      o.settle_ms);
  std::printf("%-9s %9s %11s %13s %11s\n", "iteration", "RSS", "RSS settled",
              "heap in use", "heap free");
  std::printf("%-9s %9.1f %11.1f %13.1f %11.1f\n", "start",
              mib(metric(before, "process_resident_memory_bytes")),
              mib(metric(before, "process_resident_memory_bytes")),
              mib(metric(before, "schedplug_heap_in_use_bytes")),
              mib(metric(before, "schedplug_heap_free_bytes")));

  uint64_t version = 0;
  for (int it = 1; it <= o.iterations; ++it) {
    // Identical every iteration: same seed, same nodes, same pods.
    RandomCluster rnd(1234);
    rnd.inject_errors = false;
    {
      v1::PreFilterRequest request;
      request.set_session_id(session);
      request.set_scheduler_name("default-scheduler");
      *request.mutable_pod() = soak_pod(rnd, true);
      auto* delta = request.mutable_delta();
      delta->set_full(true);
      delta->set_new_version(++version);
      for (uint32_t i = 0; i < o.nodes; ++i) {
        *delta->add_upserts() =
            rnd.node(i, "node-" + std::to_string(i), static_cast<int64_t>(it));
      }
      grpc::ClientContext context;
      v1::PreFilterResponse response;
      const grpc::Status s = stub->PreFilter(&context, request, &response);
      if (!s.ok()) {
        std::cerr << "full table: " << s.error_message() << "\n";
        stop();
        return 1;
      }
    }
    for (int i = 0; i < o.prefilters; ++i) {
      v1::PreFilterRequest request;
      request.set_session_id(session);
      request.set_scheduler_name("default-scheduler");
      *request.mutable_pod() = soak_pod(rnd, true);
      auto* delta = request.mutable_delta();
      delta->set_base_version(version);
      delta->set_new_version(++version);
      const uint32_t slot = static_cast<uint32_t>(i) % o.nodes;
      *delta->add_upserts() = rnd.node(slot, "node-" + std::to_string(slot),
                                       static_cast<int64_t>(1000 + i));
      grpc::ClientContext context;
      v1::PreFilterResponse response;
      const grpc::Status s = stub->PreFilter(&context, request, &response);
      if (!s.ok()) {
        std::cerr << "PreFilter: " << s.error_message() << "\n";
        stop();
        return 1;
      }
    }
    for (int i = 0; i < o.prescores; ++i) {
      v1::PreScoreRequest request;
      request.set_session_id(session);
      request.set_scheduler_name("default-scheduler");
      *request.mutable_pod() = soak_pod(rnd, false);
      request.set_table_version(version);
      for (uint32_t n = 0; n < o.nodes; n += 10) request.add_nodes(n);
      grpc::ClientContext context;
      v1::PreScoreResponse response;
      const grpc::Status s = stub->PreScore(&context, request, &response);
      if (!s.ok()) {
        std::cerr << "PreScore: " << s.error_message() << "\n";
        stop();
        return 1;
      }
    }
    const std::string end = http_get_metrics(port);
    std::this_thread::sleep_for(std::chrono::milliseconds(o.settle_ms));
    const std::string text = http_get_metrics(port);
    std::printf("%-9d %9.1f %11.1f %13.1f %11.1f\n", it,
                mib(metric(end, "process_resident_memory_bytes")),
                mib(metric(text, "process_resident_memory_bytes")),
                mib(metric(text, "schedplug_heap_in_use_bytes")),
                mib(metric(text, "schedplug_heap_free_bytes")));
    std::fflush(stdout);
  }
  stop();
  return 0;
}

}  // namespace
}  // namespace schedplug::host::testing

int main(int argc, char** argv) {
  schedplug::host::testing::Options o;
  CLI::App cli{
      "schedplug-host-memory-soak: runs one identical workload again and "
      "again on one session of the real schedplug-host and prints its RSS "
      "and heap after each"};
  cli.add_option("--iterations", o.iterations)->capture_default_str();
  cli.add_option("--nodes", o.nodes)->capture_default_str();
  cli.add_option("--prefilters", o.prefilters)->capture_default_str();
  cli.add_option("--prescores", o.prescores)->capture_default_str();
  cli.add_option("--settle-ms", o.settle_ms,
                 "Wait after each workload before the settled figures")
      ->capture_default_str();
  cli.add_option("host_args", o.host_args, "Extra schedplug-host flags")
      ->allow_extra_args();
  cli.positionals_at_end();
  CLI11_PARSE(cli, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  return schedplug::host::testing::run(o);
}
