// schedplug-host: runs native kube-scheduler plugins (.so files) behind
// the schedplug.v1.Host gRPC service that the shim inside kube-scheduler
// calls. See host/README.md for flags, metrics and figures.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "host/app/host_app.hpp"

namespace {

// klog-style verbosity: 0 and 1 info and warnings, 2-3 add a summary line
// per call (spdlog's debug level holds those lines only), 4 and up add
// everything (spdlog's trace: per refresh, per connection, plugins' DEBUG
// logs, ...).
void set_verbosity(int v) {
  auto logger = spdlog::stderr_color_mt("schedplug-host");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%L%$ %v",
                      spdlog::pattern_time_type::utc);
  if (v >= 4) {
    spdlog::set_level(spdlog::level::trace);
  } else if (v >= 2) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::info);
  }
}

// glibc's defaults suit short programs, not a long-running server whose
// requests come on changing threads: up to 8 arenas per core, each keeping
// its own freed memory, and an mmap threshold that rises after every large
// free (so later large buffers stay in the heaps for good). Two arenas and
// a fixed 256 KiB threshold bound that; MALLOC_ARENA_MAX and
// MALLOC_MMAP_THRESHOLD_ in the environment still win.
void bound_malloc() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) {
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
  }
}

}  // namespace

// `schedplug-host probe [--listen ADDR] [--timeout SECONDS] [--details]`:
// the liveness probe (exit 0 when the host answers SERVING in time).
int probe(int argc, char** argv) {
  std::string listen = schedplug::host::HostOptions().listen;
  double timeout_seconds = 2;
  CLI::App cli{
      "schedplug-host probe: exit 0 when the schedplug-host at --listen "
      "answers its gRPC health check with SERVING in time, 1 otherwise (a "
      "liveness probe for the sidecar)"};
  cli.add_option("--listen", listen, "The host's --listen address")
      ->capture_default_str();
  cli.add_option("--timeout", timeout_seconds, "Seconds to wait for the answer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  schedplug::host::ProbeTls tls;
  cli.add_option("--tls-ca", tls.ca,
                 "For a host serving TLS on TCP: the CA (PEM) that signed its "
                 "certificate");
  cli.add_option("--tls-cert", tls.cert,
                 "With --tls-ca, for a host started with --tls-client-ca: a "
                 "client certificate (PEM) its CA signed");
  cli.add_option("--tls-key", tls.key, "The key (PEM) of --tls-cert");
  bool details = false;
  cli.add_flag("--details", details,
               "Also print, on stdout, the plugin builds the host serves, its "
               "hot reloads and the changes it refused that still stand "
               "(docs/hot-reload.md); the exit status stays the health's");
  CLI11_PARSE(cli, argc, argv);
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  const int health =
      schedplug::host::probe_health(listen, timeout, std::cerr, tls);
  if (details &&
      !schedplug::host::print_host_status(listen, timeout, std::cout, tls))
    return 1;
  return health;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "probe") {
    return probe(argc - 1, argv + 1);
  }
  schedplug::host::HostOptions options;
  double hook_hard_limit_seconds = 5;
  double memory_trim_seconds = 1;
  int verbosity = 0;
  int drain_seconds = 10;
  size_t max_sessions = options.service.max_sessions;
  double heartbeat_seconds =
      std::chrono::duration<double>(options.service.heartbeat).count();
  size_t max_sessions_per_peer = options.service.max_sessions_per_peer;
  uint64_t max_session_memory = options.service.max_session_memory;
  uint64_t max_total_session_memory = options.service.max_total_session_memory;
  size_t explain_cycles = options.service.recent_cycles.max_cycles;
  uint64_t explain_memory = options.service.recent_cycles.max_bytes;
  uint64_t record_file_size = options.record.file_bytes;
  uint64_t record_max_size = options.record.max_bytes;

  CLI::App cli{
      "schedplug-host: runs native kube-scheduler plugins for the schedplug "
      "shim"};
  cli.add_option("--config", options.config,
                 "The KubeSchedulerConfiguration file (the same one "
                 "kube-scheduler reads)")
      ->required();
  cli.add_option("--plugins", options.plugins, "Directory of plugin .so files")
      ->required();
  cli.add_option("--listen", options.listen,
                 "gRPC address: unix:///path.sock or host:port")
      ->capture_default_str();
  cli.add_option("--metrics-listen", options.metrics_listen,
                 "Prometheus metrics address host:port; a bare port means "
                 "127.0.0.1:port (empty: no metrics)")
      ->capture_default_str();
  cli.add_option(
         "-v,--v", verbosity,
         "Log verbosity like kube-scheduler's: 0 info and warnings, 2 a "
         "line per call, 4 debug")
      ->capture_default_str();
  cli.add_option(
         "--max-message-bytes", options.max_message_bytes,
         "Largest gRPC message accepted; bigger ones get RESOURCE_EXHAUSTED")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cli.add_option(
         "--fast-path", options.fast_path,
         "With a unix --listen, also serve PreFilter, FilterNodes and "
         "PreScore on the socket's path + \".fast\" as plain frames, which "
         "the shim uses instead of gRPC for them (false: gRPC only)")
      ->capture_default_str();
  cli.add_flag("--watch,!--no-watch", options.watch,
               "Watch --plugins and the --config file's directory and swap in "
               "changed plugin files and args without a restart (hot reload; "
               "SIGHUP reloads either way)")
      ->capture_default_str();
  cli.add_option("--workers", options.workers,
                 "Filter/score worker threads besides the request thread (0: "
                 "cores - 1)")
      ->capture_default_str();
  cli.add_option(
         "--max-sessions", max_sessions,
         "Sessions kept at once (one per scheduler); the least recently "
         "used is dropped beyond it")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cli.add_option(
         "--max-sessions-per-peer", max_sessions_per_peer,
         "Sessions one peer (a uid on the unix socket, a TLS client "
         "certificate or an address on TCP) may hold; its next one drops its "
         "own least recently used, never another peer's")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cli.add_option(
         "--max-session-memory", max_session_memory,
         "Memory one session may hold (its node table and current pod, "
         "estimated from their sizes; 5000 nodes with 110 pods each in their "
         "pod lists take about 221 MiB); a node-table delta beyond it gets "
         "RESOURCE_EXHAUSTED (0: no bound). Units: Ki, Mi, Gi (1024) or k, "
         "M, G (1000)")
      ->transform(CLI::AsSizeValue(true))
      ->default_str("1Gi");
  cli.add_option(
         "--max-total-session-memory", max_total_session_memory,
         "Memory all sessions together may hold, as --max-session-memory "
         "counts it; sessions of the same peer idle for 30 s make room first, "
         "then a delta beyond it gets RESOURCE_EXHAUSTED (0: no bound)")
      ->transform(CLI::AsSizeValue(true))
      ->default_str("2Gi");
  cli.add_option(
         "--explain-cycles", explain_cycles,
         "Recent scheduling cycles the host keeps for `schedplug explain` "
         "(each native plugin's verdicts, scores and timings; the oldest "
         "goes first; 0: keep none)")
      ->capture_default_str();
  cli.add_option("--explain-memory", explain_memory,
                 "Memory those cycles may hold, estimated from their sizes; "
                 "the oldest goes first. Units as --max-session-memory")
      ->transform(CLI::AsSizeValue(true))
      ->default_str("64Mi");
  cli.add_option("--record", options.record.dir,
                 "Directory to record every pod cycle's calls into, as asked "
                 "and as answered, for `schedplug replay` (docs/"
                 "record-replay.md; empty: no recording)")
      ->check(CLI::ExistingDirectory);
  cli.add_option("--record-file-size", record_file_size,
                 "Compressed size at which a recording file is closed and "
                 "the next begun (at most a quarter of --record-max-size). "
                 "Units as --max-session-memory")
      ->transform(CLI::AsSizeValue(true))
      ->default_str("64Mi");
  cli.add_option("--record-max-size", record_max_size,
                 "What the recording files and their directory may take on "
                 "disk, the file being written included (as du counts it); "
                 "the oldest are removed to stay within it. At least 64Ki. "
                 "Units as --max-session-memory")
      ->transform(CLI::AsSizeValue(true))
      ->default_str("4Gi");
  cli.add_option(
         "--hook-hard-limit", hook_hard_limit_seconds,
         "Seconds one plugin hook call (applies, filter, score, "
         "normalize_score) may run; beyond it the host reports NOT_SERVING "
         "and exits with status 3 so that it is restarted (0: never)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cli.add_option("--memory-trim-interval", memory_trim_seconds,
                 "Seconds between checks that give freed heap memory back "
                 "to the system once RSS minus the heap in use grew by 8 MiB "
                 "(0: never)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cli.add_option(
         "--session-heartbeat", heartbeat_seconds,
         "Seconds between the heartbeats of a session's WatchSession stream; "
         "a shim that hears nothing for three of them stops using the "
         "verdicts it kept and handshakes again")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 60.0));
  cli.add_option("--drain-seconds", drain_seconds,
                 "On SIGTERM, how long in-flight calls may take to finish")
      ->capture_default_str();
  cli.add_option("--socket-group", options.security.socket_group,
                 "Group (name or gid) that may use the unix socket: its "
                 "directory becomes 0750 and the socket 0660 (default: "
                 "owner only, 0700 and 0600)");
  cli.add_option("--allow-uid", options.security.allowed_uids,
                 "A uid whose connections the unix socket serves; repeat "
                 "for several (default: only the host's own uid)")
      ->delimiter(',');
  cli.add_option("--read-only-uid", options.security.read_only_uids,
                 "A uid whose connections the unix socket serves for reading "
                 "only (schedplug explain, schedplug-host probe --details), "
                 "never the scheduler's calls; repeat for several")
      ->delimiter(',');
  cli.add_option("--read-only-group", options.security.read_only_groups,
                 "The same for processes running with this group (name or "
                 "gid) as their group id; repeat for several")
      ->delimiter(',');
  cli.add_option("--tls-cert", options.security.tls_cert,
                 "Server certificate (PEM) for a TCP --listen address");
  cli.add_option("--tls-key", options.security.tls_key,
                 "Private key (PEM) of --tls-cert");
  cli.add_option("--tls-client-ca", options.security.tls_client_ca,
                 "CA bundle (PEM) that signed the shim's client certificate: "
                 "mutual TLS, other clients are refused");
  cli.add_flag("--insecure-tcp", options.security.insecure_tcp,
               "Serve plaintext gRPC on a TCP --listen address (tests only; "
               "anyone who can reach the port gets in)");
  cli.add_option("--plugin-sha256", options.security.plugin_sha256,
                 "File of `SHA256  NAME.so` lines (sha256sum output): load "
                 "only plugin files listed there with that digest");
  CLI11_PARSE(cli, argc, argv);
  options.service.max_sessions = max_sessions;
  options.service.heartbeat =
      std::chrono::milliseconds(static_cast<int64_t>(heartbeat_seconds * 1000));
  options.service.max_sessions_per_peer = max_sessions_per_peer;
  options.service.max_session_memory = max_session_memory;
  options.service.max_total_session_memory = max_total_session_memory;
  options.service.recent_cycles.max_cycles = explain_cycles;
  options.service.recent_cycles.max_bytes = explain_memory;
  options.record.file_bytes = std::max<uint64_t>(record_file_size, 4096);
  options.record.max_bytes = record_max_size;
  options.hook_hard_limit = std::chrono::milliseconds(
      static_cast<int64_t>(hook_hard_limit_seconds * 1000));
  options.memory_trim_interval = std::chrono::milliseconds(
      static_cast<int64_t>(memory_trim_seconds * 1000));
  bound_malloc();
  set_verbosity(verbosity);

  // Every thread started from here on inherits the blocked signals; one
  // thread waits for them, so shutdown runs outside a signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<schedplug::host::HostApp> app;
  try {
    app = schedplug::host::HostApp::start(options, std::cerr);
  } catch (const schedplug::host::StartupError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }

  std::thread signal_waiter([&] {
    int received = 0;
    for (;;) {
      sigwait(&signals, &received);
      if (received != SIGHUP) break;
      spdlog::info("received SIGHUP: reloading plugins and configuration");
      app->reload();
    }
    spdlog::info("received {}", received == SIGTERM ? "SIGTERM" : "SIGINT");
    app->shutdown(std::chrono::seconds(drain_seconds));
  });
  app->wait();
  signal_waiter.join();
  app.reset();
  return 0;
}
