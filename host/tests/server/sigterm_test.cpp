// The real schedplug-host binary: SIGTERM drains in-flight calls and exits
// 0; name problems stop it from starting with `schedplug check`'s words.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "host/app/host_app.hpp"
#include "host/config/scheduler_config.hpp"
#include "host/loader/plugin_library.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

// Starts the binary with `args`, stderr into `log`.
pid_t spawn_host(const std::vector<std::string>& args,
                 const std::filesystem::path& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::dup2(fd, 1);
    std::vector<char*> argv;
    std::string binary = SCHEDPLUG_HOST_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Exit status, or -1 if it did not exit within `timeout`.
int wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(10ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Binary, SigtermDrainsTheCallInFlightAndExitsCleanly) {
  TempDir dir;
  const auto config = write_test_config(dir.path(), {.sleep_ms = 5});
  const auto socket = dir.path() / "host.sock";
  const auto log = dir.path() / "host.log";
  const pid_t pid = spawn_host(
      {"--config", config.string(), "--plugins", test_plugin_dir().string(),
       "--listen", "unix://" + socket.string(), "--workers", "1", "-v", "2"},
      log);
  auto channel = grpc::CreateChannel("unix:" + socket.string(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Host::NewStub(channel);
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
  ASSERT_FALSE(session.empty()) << read_file(log);

  // ~100 nodes x 5 ms over 2 threads: the call is in flight at SIGTERM.
  RandomCluster rnd(5);
  v1::PreFilterRequest request;
  request.set_session_id(session);
  request.set_scheduler_name("slow-scheduler");
  request.mutable_pod()->set_name("p");
  request.mutable_delta()->set_full(true);
  request.mutable_delta()->set_new_version(1);
  for (uint32_t i = 0; i < 100; ++i) {
    v1::Node n = rnd.node(i, "n" + std::to_string(i), 1);
    n.clear_labels();
    *request.mutable_delta()->add_upserts() = n;
  }
  auto in_flight = std::async(std::launch::async, [&] {
    grpc::ClientContext context;
    v1::PreFilterResponse response;
    grpc::Status s = stub->PreFilter(&context, request, &response);
    return std::make_pair(s, response.plugins_size());
  });
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const auto [status, plugins] = in_flight.get();
  EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << read_file(log);
  EXPECT_EQ(plugins, 2);
  EXPECT_EQ(wait_exit(pid, 20s), 0) << read_file(log);
  EXPECT_FALSE(std::filesystem::exists(socket));
  const std::string text = read_file(log);
  EXPECT_NE(text.find("received SIGTERM"), std::string::npos) << text;
  EXPECT_NE(text.find("shut down"), std::string::npos) << text;
}

// A plugin stuck in filter(): past --hook-hard-limit the host exits with
// status 3 naming the plugin and the hook; `schedplug-host probe` says
// SERVING before and fails after.
TEST(Binary, HungHookExitsNonZeroNamingPluginAndHook) {
  TempDir dir;
  const auto config = write_test_config(dir.path(), {.sleep_ms = 600'000});
  const auto socket = dir.path() / "host.sock";
  const auto log = dir.path() / "host.log";
  const pid_t pid = spawn_host(
      {"--config", config.string(), "--plugins", test_plugin_dir().string(),
       "--listen", "unix://" + socket.string(), "--workers", "1",
       "--hook-hard-limit", "1"},
      log);
  auto channel = grpc::CreateChannel("unix:" + socket.string(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Host::NewStub(channel);
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
  ASSERT_FALSE(session.empty()) << read_file(log);
  const auto probe_log = dir.path() / "probe.log";
  const std::vector<std::string> probe = {"probe", "--listen",
                                          "unix://" + socket.string()};
  EXPECT_EQ(wait_exit(spawn_host(probe, probe_log), 60s), 0)
      << read_file(probe_log);

  v1::PreFilterRequest request;
  request.set_session_id(session);
  request.set_scheduler_name("slow-scheduler");
  request.mutable_pod()->set_name("p");
  request.mutable_delta()->set_full(true);
  request.mutable_delta()->set_new_version(1);
  RandomCluster rnd(5);
  v1::Node n = rnd.node(0, "n0", 1);
  n.clear_labels();
  *request.mutable_delta()->add_upserts() = n;
  auto in_flight = std::async(std::launch::async, [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 300s);
    v1::PreFilterResponse response;
    return stub->PreFilter(&context, request, &response);
  });
  EXPECT_EQ(wait_exit(pid, 120s), kExitHookHung) << read_file(log);
  const grpc::Status s = in_flight.get();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  const std::string text = read_file(log);
  EXPECT_NE(text.find("plugin SleepyFilter has been inside filter() for at "
                      "least"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("over the hard limit of 1.0 s (--hook-hard-limit)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NOT_SERVING"), std::string::npos) << text;
  EXPECT_EQ(wait_exit(spawn_host(probe, probe_log), 60s), 1)
      << read_file(probe_log);
  EXPECT_NE(read_file(probe_log).find("did not answer"), std::string::npos)
      << read_file(probe_log);
}

// -v as host/README.md says: 0 info and warnings; 2 adds one line per call
// and nothing else; 4 adds the debug lines (every refresh, every
// connection, the plugins' DEBUG logs). RefreshProbe refreshes every 50 ms
// and logs each refresh at DEBUG.
TEST(Binary, VerbosityLevelsAreTheDocumentedOnes) {
  TempDir dir;
  const auto config = write_test_config(dir.path());
  const auto run = [&](const char* v) {
    const auto log = dir.path() / (std::string("v") + v + ".log");
    const auto socket = dir.path() / (std::string("v") + v + ".sock");
    const pid_t pid = spawn_host(
        {"--config", config.string(), "--plugins", test_plugin_dir().string(),
         "--listen", "unix://" + socket.string(), "--no-watch", "-v", v},
        log);
    // One call (a Handshake), and refreshes for half a second.
    bool called = false;
    for (auto until = std::chrono::steady_clock::now() + 20s;
         !called && std::chrono::steady_clock::now() < until;
         std::this_thread::sleep_for(20ms)) {
      auto stub = v1::Host::NewStub(grpc::CreateChannel(
          "unix://" + socket.string(), grpc::InsecureChannelCredentials()));
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + 2s);
      v1::HandshakeResponse response;
      called =
          stub->Handshake(&context, test_handshake_request(), &response).ok();
    }
    EXPECT_TRUE(called) << read_file(log);
    std::this_thread::sleep_for(500ms);
    ::kill(pid, SIGTERM);
    EXPECT_EQ(wait_exit(pid, 20s), 0);
    return read_file(log);
  };
  const std::string per_call = " D Handshake ";
  const std::string plugin_debug = "[RefreshProbe] refresh 3 done";
  const std::string refresh =
      "refresh of plugin RefreshProbe (profile refresh-hang) took";
  const std::string connection = "connection on ";

  const std::string v0 = run("0");
  EXPECT_EQ(v0.find(per_call), std::string::npos) << v0;
  EXPECT_EQ(v0.find(plugin_debug), std::string::npos) << v0;

  const std::string v2 = run("2");
  EXPECT_NE(v2.find(per_call), std::string::npos) << v2;
  EXPECT_EQ(v2.find(plugin_debug), std::string::npos) << v2;
  EXPECT_EQ(v2.find(refresh), std::string::npos) << v2;
  EXPECT_EQ(v2.find(connection), std::string::npos) << v2;

  const std::string v4 = run("4");
  EXPECT_NE(v4.find(per_call), std::string::npos) << v4;
  EXPECT_NE(v4.find(plugin_debug), std::string::npos) << v4;
  EXPECT_NE(v4.find(refresh), std::string::npos) << v4;
  EXPECT_NE(v4.find(connection), std::string::npos) << v4;
}

TEST(Binary, RefusesToStartWithNameProblemsAndPrintsCheckMessages) {
  TempDir dir;
  const auto config = dir.path() / "bad.yaml";
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter:
        enabled:
          - name: labelFilter
          - name: NoSuchPlugin
)";
  // What `schedplug check` prints for the same inputs.
  const LoadResult loaded = load_plugin_directory(test_plugin_dir());
  std::ostringstream expected;
  print_diagnostics(check_names(load_scheduler_config(config), loaded.plugins,
                                loaded.problems),
                    expected);
  ASSERT_NE(expected.str().find("labelFilter"), std::string::npos);

  const auto log = dir.path() / "host.log";
  const pid_t pid = spawn_host(
      {"--config", config.string(), "--plugins", test_plugin_dir().string(),
       "--listen", "unix://" + (dir.path() / "h.sock").string()},
      log);
  EXPECT_EQ(wait_exit(pid, 20s), 1);
  const std::string text = read_file(log);
  EXPECT_NE(text.find(expected.str()), std::string::npos)
      << "expected:\n"
      << expected.str() << "\ngot:\n"
      << text;
  EXPECT_NE(text.find("refuses to start"), std::string::npos) << text;
}

}  // namespace
}  // namespace schedplug::host::testing
