// schedplug-host put together: configuration, plugins, name checks, the
// plugin set, background refresh, metrics, the call pipeline with its
// observers, and its transports (gRPC, the fast path). main()
// only adds flags and signals, so tests run the very same thing in-process.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>

#include "host/check/name_check.hpp"
#include "host/explain/recent_cycles.hpp"
#include "host/observers/observers.hpp"
#include "host/pipeline/call_pipeline.hpp"
#include "host/plugin/hook_watchdog.hpp"
#include "host/record/cycle_recorder.hpp"
#include "host/reload/plugin_reload.hpp"
#include "host/reload/reload_status.hpp"
#include "host/security/security_options.hpp"
#include "host/transport/grpc/host_service.hpp"

namespace grpc {
class Server;
}

namespace schedplug::host {

class ChangeWatch;
class FastPathServer;
class MetricsEndpoint;
class UnixListener;

// The fast-path socket of a host listening on `socket`: the same path with
// ".fast" appended.
std::filesystem::path fast_path_socket_path(
    const std::filesystem::path& socket);

struct HostOptions {
  std::filesystem::path config;
  std::filesystem::path plugins;
  std::string listen = "unix:///run/schedplug/host.sock";
  std::string metrics_listen;  // empty: no metrics endpoint
  int max_message_bytes = 64 << 20;
  unsigned workers = 0;  // 0: ThreadPool::default_workers()
  // With a unix --listen: also serve PreFilter and PreScore on the
  // fast-path socket beside it (fast_path_socket_path()).
  bool fast_path = true;
  ServiceOptions service;
  SecurityOptions security;  // socket modes, allowed uids, TLS
  // A plugin hook of the request path (filter, score, ..., pre_bind) running
  // longer than this makes the host report NOT_SERVING and exit with
  // kExitHookHung. 0 turns the watchdog off.
  std::chrono::milliseconds hook_hard_limit{5000};
  // Hot reload (host/reload/): watch the plugin directory and the
  // configuration file's directory, and swap in what changed once
  // changes settled for `reload_settle`. false: only reload() reloads.
  bool watch = true;
  std::chrono::milliseconds reload_settle{500};
  // --record (host/record/): empty dir, no recording.
  RecorderOptions record;
  // Tests only: called instead of exiting (after NOT_SERVING and the log).
  std::function<void(const HungHook&)> on_hung_hook;
  // How often a background thread checks the resident size and gives
  // freed heap memory back to the system (malloc_trim) once RSS minus the
  // heap in use grew by 8 MiB since the last time. Without
  // it, glibc keeps what a full node-table upload freed, and RSS grows
  // with every upload (host/README.md, "Memory"). 0 turns it off.
  std::chrono::milliseconds memory_trim_interval{1000};
};

// schedplug-host's exit status when a plugin hook exceeded the hard limit.
inline constexpr int kExitHookHung = 3;

// Start-up failed; every diagnostic was already written out. what() is a
// one-line summary.
class StartupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class HostApp {
 public:
  // Reads the config, loads the plugins, runs the name checks (printing
  // every diagnostic to `diagnostics` as `schedplug check` does), creates
  // the plugins and starts serving. Throws StartupError.
  static std::unique_ptr<HostApp> start(const HostOptions& options,
                                        std::ostream& diagnostics);
  ~HostApp();
  HostApp(const HostApp&) = delete;
  HostApp& operator=(const HostApp&) = delete;

  // Stops accepting calls, lets in-flight calls finish (cancelling them
  // after `drain`), stops background refresh. Safe to call more than once
  // and from another thread than wait().
  void shutdown(std::chrono::milliseconds drain);
  // Blocks until shutdown() finished.
  void wait();
  // Re-reads the configuration and plugin directory now and swaps in what
  // passes the checks (SIGHUP; the watch calls the same).
  ReloadOutcome reload();

  // The address gRPC clients dial ("unix:/path" or "host:port").
  const std::string& target() const { return target_; }
  HostMetrics& metrics() { return *metrics_; }
  // The port /metrics is served on (--metrics-listen); 0 without it.
  int metrics_port() const;
  // The shadow candidates were abandoned (one hung past the hard limit).
  bool shadow_abandoned() const { return shadow_ && shadow_->abandoned(); }
  // The --record recorder (nullptr without --record).
  CycleRecorder* recorder() { return recorder_.get(); }
  // The gRPC service.
  const HostService& service() const { return *service_; }
  HostService& service() { return *service_; }
  // For tests and `schedplug replay`, which call in-process, without a
  // transport.
  const CallPipeline& pipeline() const { return *pipeline_; }
  CallPipeline& pipeline() { return *pipeline_; }
  // The recent cycles Explain answers from.
  const RecentCycles& recent_cycles() const { return *recent_; }

 private:
  HostApp() = default;

  // First, so that it outlives the listener and the service that use it.
  std::unique_ptr<PeerIdentities> peers_;
  std::string target_;
  std::filesystem::path socket_path_;
  std::unique_ptr<HostMetrics> metrics_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ShadowRunner> shadow_;     // shadow candidates (host/shadow/)
  std::unique_ptr<CycleRecorder> recorder_;  // --record only
  std::unique_ptr<RecentCycles> recent_;
  ReloadStatus reload_status_;
  // What the pipeline tells; before it, so that it goes first.
  std::vector<std::unique_ptr<CallObserver>> observers_;
  std::unique_ptr<CallPipeline> pipeline_;
  std::unique_ptr<HostService> service_;
  std::unique_ptr<PluginReloader> reloader_;
  std::unique_ptr<ChangeWatch> watch_;  // stopped first at shutdown
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixListener> unix_listener_;  // unix --listen only
  std::filesystem::path fast_socket_path_;
  std::unique_ptr<FastPathServer> fast_server_;  // with --fast-path only
  std::unique_ptr<UnixListener> fast_listener_;
  std::unique_ptr<HookWatchdog> watchdog_;
  class MemoryTrimmer;
  std::unique_ptr<MemoryTrimmer> trimmer_;

  std::mutex shutdown_mutex_;
  bool shut_down_ = false;
};

// How `schedplug-host probe` reaches a host serving TLS on TCP: the CA
// that signed the host's certificate and, for mutual TLS, a client
// certificate and key (PEM files). Empty `ca`: plaintext.
struct ProbeTls {
  std::filesystem::path ca;
  std::filesystem::path cert;
  std::filesystem::path key;
};

// A channel to the host at `listen` (a --listen address; a wildcard TCP
// address is dialled on loopback), with `tls` for a TLS host. Throws
// std::invalid_argument with a sentence for a bad address or TLS file.
std::shared_ptr<grpc::Channel> dial_host(const std::string& listen,
                                         const ProbeTls& tls = {});

// `schedplug-host probe`: asks the host at `listen` (a --listen address)
// for its gRPC health within `timeout`. Returns 0 when it is SERVING, 1
// otherwise, with a line on `out` saying what it found.
int probe_health(const std::string& listen, std::chrono::milliseconds timeout,
                 std::ostream& out, const ProbeTls& tls = {});

// `schedplug-host probe --details`: the host's Status (the plugin builds
// it serves, its reloads, the refused changes that stand) as lines on
// `out`. false, with a line saying why, when the host did not answer.
bool print_host_status(const std::string& listen,
                       std::chrono::milliseconds timeout, std::ostream& out,
                       const ProbeTls& tls = {});

// "error: ..." / "warning: ..." lines, as `schedplug check` prints them.
void print_diagnostics(const std::vector<Diagnostic>& diagnostics,
                       std::ostream& out);

}  // namespace schedplug::host
