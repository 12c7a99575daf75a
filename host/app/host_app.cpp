// HostApp::start in the order start-up must happen (config, plugins, name
// checks, instances, metrics, listeners, watchdogs) and the reverse at
// shutdown: one file so that the order reads top to bottom.
#include "host/app/host_app.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/ranges.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/credentials.h>
#include <spdlog/spdlog.h>

#include "host/check/startup_check.hpp"
#include "host/config/resolve.hpp"
#include "host/config/scheduler_config.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/metrics/metrics_endpoint.hpp"
#include "host/reload/change_watch.hpp"
#include "host/security/listen_address.hpp"
#include "host/security/tcp_credentials.hpp"
#include "host/security/unix_listener.hpp"
#include "host/shadow/candidates.hpp"
#include "host/transport/fastpath/fast_path_server.hpp"

namespace schedplug::host {
namespace {

[[noreturn]] void fail(std::ostream& out, const std::string& message) {
  out << "error: " << message << "\n";
  throw StartupError(message);
}

// Fast-path connections served at once: the shim opens one per concurrent
// cycle call (one per profile being scheduled), so this is plenty; more are
// closed and those calls go over gRPC.
constexpr size_t kFastPathMaxConnections = 32;

}  // namespace

std::filesystem::path fast_path_socket_path(
    const std::filesystem::path& socket) {
  std::filesystem::path fast = socket;
  fast += ".fast";
  return fast;
}

// Gives freed heap memory back to the system. glibc keeps memory freed in
// the middle of its heaps (a full node-table upload frees tens of MiB of
// small protobuf and pod/node model allocations between long-lived table
// nodes), so without this RSS climbs with every upload while the heap in use
// stays flat. mallinfo2() and malloc_trim() are cheap next to an upload, and
// run on this thread, never on a request thread.
class HostApp::MemoryTrimmer {
 public:
  explicit MemoryTrimmer(std::chrono::milliseconds interval)
      : thread_([this, interval] { run(interval); }) {}
  ~MemoryTrimmer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  // Trims when RSS minus the heap in use (what malloc keeps without using
  // it, plus code and stacks) grew by this much since the last trim.
  static constexpr long kGrowth = 8 << 20;
  static long resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    long size = 0, pages = 0;
    statm >> size >> pages;
    return pages * sysconf(_SC_PAGESIZE);
  }
  static long kept_bytes() {
    const struct mallinfo2 m = mallinfo2();
    return resident_bytes() - static_cast<long>(m.uordblks + m.hblkhd);
  }
  void run(std::chrono::milliseconds interval) {
    long after_trim = kept_bytes();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      const long kept = kept_bytes();
      if (kept < after_trim) after_trim = kept;
      if (kept - after_trim < kGrowth) continue;
      malloc_trim(0);
      after_trim = kept_bytes();
      spdlog::trace("gave {:.1f} MiB of freed heap back to the system",
                    static_cast<double>(kept - after_trim) / (1 << 20));
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

void print_diagnostics(const std::vector<Diagnostic>& diagnostics,
                       std::ostream& out) {
  for (const Diagnostic& d : diagnostics) {
    out << (d.severity == Severity::kError ? "error: " : "warning: ")
        << d.message << "\n";
  }
  out.flush();
}

std::unique_ptr<HostApp> HostApp::start(const HostOptions& options,
                                        std::ostream& diagnostics) {
  std::unique_ptr<HostApp> app(new HostApp());

  ListenAddress listen;
  try {
    listen = parse_listen_address(options.listen);
  } catch (const std::invalid_argument& e) {
    fail(diagnostics, e.what());
  }

  // Checked before each dlopen (host/loader/plugin_file_check.hpp).
  plugin_file_policy().pins.reset();
  if (!options.security.plugin_sha256.empty()) {
    try {
      plugin_file_policy().pins =
          read_plugin_pins(options.security.plugin_sha256);
    } catch (const std::exception& e) {
      fail(diagnostics, e.what());
    }
  }
  // Every problem at once, exactly as `schedplug check` prints them: the
  // same code path, the instances created with their args included.
  StartupCheck check;
  try {
    check = run_startup_check(
        {.config = options.config, .plugins = options.plugins, .create = true});
  } catch (const LoadError& e) {
    fail(diagnostics, e.what());
  }
  print_diagnostics(check.diagnostics, diagnostics);
  if (check.has_errors()) {
    throw StartupError(
        "schedplug-host refuses to start: " + std::to_string(check.errors()) +
        " problem(s) with the configuration or the plugins "
        "(see above; `schedplug check` reports the same)");
  }
  std::vector<std::string> warnings;
  for (const Diagnostic& d : check.diagnostics) warnings.push_back(d.message);

  GenerationParts parts{.config_bytes = config_file_bytes(options.config),
                        .libraries = check.loaded.plugins,
                        .resolved = check.profiles,
                        .warnings = std::move(warnings),
                        .checked = std::move(check.created)};
  std::shared_ptr<PluginGeneration> plugins;
  try {
    plugins = make_generation(std::move(parts), nullptr);
  } catch (const CreateError& e) {
    fail(diagnostics, e.what());
  }
  for (const auto& lib : plugins->libraries) {
    spdlog::info(
        "loaded plugin {} {} from {} (filter: {}, score: {}, refresh: {})",
        lib->name(), lib->version(), lib->file().string(), lib->has_filter(),
        lib->has_score(), lib->has_refresh());
  }
  for (const ShadowBuild& b : shadow_builds(plugins->resolved)) {
    spdlog::info("shadow candidate of {}: {} {} from {} (sha256 {}), in {}",
                 b.plugin, b.plugin, b.version, b.file, b.sha256,
                 fmt::join(b.profiles, ", "));
  }
  for (const ProfilePlugins& p : plugins->created->profiles()) {
    spdlog::info("profile \"{}\": {} native filters, {} native scorers",
                 p.scheduler_name, p.filters.size(), p.scorers.size());
  }

  std::vector<const PluginInstance*> instances;
  for (const ProfilePlugins& p : plugins->created->profiles()) {
    instances.insert(instances.end(), p.plugins.begin(), p.plugins.end());
  }
  app->metrics_ = std::make_unique<HostMetrics>(instances);
  app->metrics_->plugins_loaded(*plugins);
  app->metrics_->config_file(options.config.filename().string());
  if (!options.metrics_listen.empty()) {
    const std::string metrics_listen = metrics_address(options.metrics_listen);
    try {
      app->metrics_endpoint_ =
          std::make_unique<MetricsEndpoint>(metrics_listen, *app->metrics_);
    } catch (const std::exception& e) {
      fail(diagnostics, "cannot serve metrics on --metrics-listen " +
                            options.metrics_listen + ": " + e.what());
    }
    spdlog::info("metrics on http://{}/metrics", metrics_listen);
  }

  app->pool_ = std::make_unique<ThreadPool>(
      options.workers > 0 ? options.workers : ThreadPool::default_workers());
  start_refresh(*plugins, nullptr, app->metrics_.get());

  PipelineContext context;
  context.plugins = plugins;
  context.config_file = options.config;
  context.pool = app->pool_.get();
  app->shadow_ = std::make_unique<ShadowRunner>(app->metrics_.get());
  if (!options.record.dir.empty()) {
    try {
      app->recorder_ =
          std::make_unique<CycleRecorder>(options.record, app->metrics_.get());
    } catch (const RecordError& e) {
      fail(diagnostics, e.what());
    }
    spdlog::info(
        "recording every pod cycle into {} (files of {} KiB, at most {} MiB)",
        options.record.dir.string(),
        std::min(options.record.file_bytes, options.record.max_bytes / 4) >> 10,
        options.record.max_bytes >> 20);
  }
  app->peers_ = std::make_unique<PeerIdentities>();
  if (listen.is_unix && options.fast_path) {
    app->fast_socket_path_ = fast_path_socket_path(listen.socket_path);
    context.fast_path_socket = app->fast_socket_path_.filename().string();
  }
  app->pipeline_ =
      std::make_unique<CallPipeline>(std::move(context), options.service);
  CallPipeline& pipeline = *app->pipeline_;
  // The observers, in the order the pipeline tells them: the recorder,
  // metrics, the recent cycles, the shadow candidates.
  app->recent_ = std::make_unique<RecentCycles>(options.service.recent_cycles);
  if (app->recorder_) {
    app->observers_.push_back(std::make_unique<RecordObserver>(
        *app->recorder_, *pipeline.plugins(), pipeline.identity()));
  }
  app->observers_.push_back(
      std::make_unique<MetricsObserver>(*app->metrics_, pipeline.sessions()));
  app->observers_.push_back(
      std::make_unique<ExplainObserver>(*app->recent_, app->metrics_.get()));
  app->observers_.push_back(std::make_unique<ShadowObserver>(*app->shadow_));
  for (const auto& observer : app->observers_) pipeline.add_observer(*observer);
  app->service_ = std::make_unique<HostService>(
      pipeline, GrpcServiceContext{.peers = app->peers_.get(),
                                   .metrics = app->metrics_.get(),
                                   .recent_cycles = app->recent_.get(),
                                   .reload_status = &app->reload_status_,
                                   .heartbeat = options.service.heartbeat});
  app->reloader_ = std::make_unique<PluginReloader>(
      ServingPlugins{
          .current = [&pipeline] { return pipeline.plugins(); },
          .swap =
              [&pipeline](std::shared_ptr<const PluginGeneration> next) {
                pipeline.swap_plugins(std::move(next));
              },
          .status = &app->reload_status_},
      app->metrics_.get(), options.config, options.plugins, *check.config,
      options.security.plugin_sha256);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int selected_port = 0;
  if (listen.is_unix) {
    // The host accepts on the socket itself and hands gRPC only the
    // connections whose peer uid is allowed (host/security/unix_listener).
    try {
      check_unix_security_flags(options.security);
      app->unix_listener_ = std::make_unique<UnixListener>(
          listen.socket_path, options.security, app->metrics_->registry().get(),
          app->peers_.get(), /*read_only_peers=*/true);
    } catch (const std::exception& e) {
      fail(diagnostics, e.what());
    }
    app->socket_path_ = listen.socket_path;
  } else {
    std::shared_ptr<grpc::ServerCredentials> credentials;
    try {
      check_tcp_security_flags(options.security);
      credentials = tcp_server_credentials(options.security, options.listen);
    } catch (const std::exception& e) {
      fail(diagnostics, e.what());
    }
    builder.AddListeningPort(listen.grpc_uri, credentials, &selected_port);
  }
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterService(app->service_.get());
  app->server_ = builder.BuildAndStart();
  if (app->server_ == nullptr || (!listen.is_unix && selected_port == 0)) {
    fail(diagnostics, "cannot listen on --listen " + options.listen +
                          " (address in use, or no permission)");
  }
  app->target_ = listen.grpc_uri;
  if (listen.is_unix) {
    app->unix_listener_->start(app->server_.get());
    std::string uids;
    for (uid_t uid : app->unix_listener_->allowed_uids()) {
      uids += (uids.empty() ? "" : ", ") + std::to_string(uid);
    }
    spdlog::info("unix socket {}: connections from uid {} only",
                 listen.socket_path.string(), uids);
    if (!app->fast_socket_path_.empty()) {
      // The same checks as the gRPC socket (directory, modes, peer uids).
      try {
        app->fast_listener_ = std::make_unique<UnixListener>(
            app->fast_socket_path_, options.security,
            app->metrics_->registry().get());
      } catch (const std::exception& e) {
        fail(diagnostics, std::string(e.what()) +
                              " (the fast-path socket; --fast-path=false "
                              "serves gRPC only)");
      }
      app->fast_server_ = std::make_unique<FastPathServer>(
          *app->pipeline_, static_cast<size_t>(options.max_message_bytes),
          kFastPathMaxConnections);
      FastPathServer* fast = app->fast_server_.get();
      app->fast_listener_->start([fast](int fd) { fast->serve(fd); });
      spdlog::info(
          "fast path for PreFilter, FilterNodes, PreScore, NoteCycles, "
          "Reserve, Unreserve and Permit on {}",
          app->fast_socket_path_.string());
    }
  } else if (selected_port > 0) {
    // "host:0" asks for any port; tell clients the real one.
    const auto colon = listen.grpc_uri.rfind(':');
    app->target_ =
        listen.grpc_uri.substr(0, colon + 1) + std::to_string(selected_port);
  }
  app->server_->GetHealthCheckService()->SetServingStatus(true);
  app->reload_status_.set_watching(options.watch);
  if (options.watch) {
    PluginReloader* reloader = app->reloader_.get();
    try {
      // In the configuration's directory only the file itself matters, and
      // a ConfigMap volume's ..data swap.
      const std::filesystem::path config_dir =
          options.config.parent_path().empty() ? std::filesystem::path(".")
                                               : options.config.parent_path();
      std::vector<WatchedDir> dirs{
          {.dir = options.plugins, .names = {}},
          {.dir = config_dir,
           .names = {options.config.filename().string(), "..data"}}};
      // The --plugin-sha256 list, when it lives elsewhere (a bundle ships
      // it beside the plugins).
      const std::filesystem::path& pins = options.security.plugin_sha256;
      if (!pins.empty() && pins.parent_path() != options.plugins) {
        dirs.push_back({.dir = pins.parent_path().empty()
                                   ? std::filesystem::path(".")
                                   : pins.parent_path(),
                        .names = {pins.filename().string(), "..data"}});
      }
      app->watch_ =
          std::make_unique<ChangeWatch>(std::move(dirs), options.reload_settle,
                                        [reloader] { reloader->reload(); });
      spdlog::info(
          "watching {} and {} for changes (hot reload; --no-watch turns it "
          "off)",
          options.plugins.string(), options.config.string());
    } catch (const std::exception& e) {
      fail(diagnostics, e.what());
    }
  }
  if (options.memory_trim_interval.count() > 0) {
    app->trimmer_ =
        std::make_unique<MemoryTrimmer>(options.memory_trim_interval);
  }
  if (options.hook_hard_limit.count() > 0) {
    HostApp* self = app.get();
    app->watchdog_ = std::make_unique<HookWatchdog>(
        options.hook_hard_limit,
        [self, handler = options.on_hung_hook](const HungHook& hung) {
          if (hung.shadow && self->shadow_ != nullptr) {
            // No live answer waits for a candidate: the live path goes on.
            if (self->metrics_)
              self->metrics_->shadow_disagreed(hung.plugin, "hung", 1);
            self->shadow_->abandon(hung.message());
            return;
          }
          self->server_->GetHealthCheckService()->SetServingStatus(false);
          spdlog::critical(
              "{}: the host now reports NOT_SERVING and exits with status {} "
              "so that it is restarted (a stuck plugin would otherwise hold "
              "its threads and sessions for good); fix the plugin, or raise "
              "--hook-hard-limit if this hook is legitimately that slow",
              hung.message(), kExitHookHung);
          if (handler) {
            handler(hung);
            return;
          }
          spdlog::default_logger()->flush();
          std::_Exit(kExitHookHung);
        });
  }
  spdlog::info(
      "serving schedplug.v1.Host on {} ({} threads run filters and scores)",
      app->target_, app->pool_->workers() + 1);
  return app;
}

void HostApp::shutdown(std::chrono::milliseconds drain) {
  std::lock_guard lock(shutdown_mutex_);
  if (shut_down_) return;
  shut_down_ = true;
  watch_.reset();  // no reload from now on
  if (server_) {
    server_->GetHealthCheckService()->SetServingStatus(false);
    spdlog::info("shutting down: draining in-flight calls (up to {} ms)",
                 drain.count());
    if (unix_listener_) unix_listener_->stop();
    if (fast_listener_) fast_listener_->stop();
    if (fast_server_) fast_server_->stop();
    // The shims' watches end now (UNAVAILABLE): they stop trusting what
    // they kept before the drain, and Shutdown does not wait for them.
    service_->stop_watches();
    server_->Shutdown(std::chrono::system_clock::now() + drain);
  }
  // A refresh still running keeps its instance for the rest of the process
  // (plugin_generation.cpp) rather than have it destroyed under its thread.
  if (pipeline_) pipeline_->plugins()->stop_refresh();
  spdlog::info("shut down");
}

ReloadOutcome HostApp::reload() {
  {
    std::lock_guard lock(shutdown_mutex_);
    if (shut_down_) return {};
  }
  return reloader_->reload();
}

void HostApp::wait() {
  if (server_) server_->Wait();
}

int HostApp::metrics_port() const {
  return metrics_endpoint_ ? metrics_endpoint_->port() : 0;
}

HostApp::~HostApp() {
  shutdown(std::chrono::milliseconds(2000));
  unix_listener_.reset();
  fast_listener_.reset();
  fast_server_.reset();
  server_.reset();
  watchdog_.reset();
  trimmer_.reset();
  reloader_.reset();
  pipeline_.reset();
  service_.reset();
  observers_.clear();
  // After the pipeline: it queues jobs. A runner whose thread is stuck in a
  // candidate's hook is left for the rest of the process, with the metrics
  // it counts into (joining it would wait for good).
  if (shadow_ != nullptr && shadow_->abandoned()) {
    (void)shadow_.release();
    (void)metrics_.release();
  }
  shadow_.reset();
  recorder_.reset();  // the same; writes what is queued
  pool_.reset();
  if (!socket_path_.empty()) {
    std::error_code ec;
    std::filesystem::remove(socket_path_, ec);
    if (!fast_socket_path_.empty())
      std::filesystem::remove(fast_socket_path_, ec);
  }
}

namespace {

std::string read_pem(const std::filesystem::path& file, const char* flag) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw std::invalid_argument(std::string(flag) + " " + file.string() +
                                ": cannot read the file; check the path");
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::shared_ptr<grpc::ChannelCredentials> probe_credentials(
    const ListenAddress& address, const ProbeTls& tls) {
  if (tls.ca.empty()) {
    if (!tls.cert.empty() || !tls.key.empty()) {
      throw std::invalid_argument(
          "--tls-cert and --tls-key need --tls-ca, the CA that signed the "
          "host's certificate");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (address.is_unix) {
    throw std::invalid_argument(
        "--tls-ca is for a TCP --listen address; the unix socket is "
        "plaintext (its permissions and peer check protect it)");
  }
  if (tls.cert.empty() != tls.key.empty()) {
    throw std::invalid_argument(
        "--tls-cert and --tls-key go together (the client certificate for a "
        "host started with --tls-client-ca)");
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = read_pem(tls.ca, "--tls-ca");
  if (!tls.cert.empty()) {
    options.pem_cert_chain = read_pem(tls.cert, "--tls-cert");
    options.pem_private_key = read_pem(tls.key, "--tls-key");
  }
  return grpc::SslCredentials(options);
}

}  // namespace

std::shared_ptr<grpc::Channel> dial_host(const std::string& listen,
                                         const ProbeTls& tls) {
  const ListenAddress address = parse_listen_address(listen);
  std::string target = address.grpc_uri;
  if (!address.is_unix) {
    // A wildcard listen address is dialled on loopback.
    const auto colon = target.rfind(':');
    const std::string host = target.substr(0, colon);
    if (host == "0.0.0.0" || host == "[::]" || host.empty()) {
      target = "127.0.0.1" + target.substr(colon);
    }
  }
  return grpc::CreateChannel(target, probe_credentials(address, tls));
}

int probe_health(const std::string& listen, std::chrono::milliseconds timeout,
                 std::ostream& out, const ProbeTls& tls) {
  std::shared_ptr<grpc::Channel> channel;
  try {
    channel = dial_host(listen, tls);
  } catch (const std::invalid_argument& e) {
    out << "probe: " << e.what() << "\n";
    return 1;
  }
  grpc::GenericStub generic(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);  // HealthCheckRequest{service: ""}
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&context, "/grpc.health.v1.Health/Check",
                    grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) {
    out << "probe: schedplug-host at " << listen << " did not answer its "
        << "health check within " << timeout.count()
        << " ms: " << status.error_message() << "\n";
    return 1;
  }
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const auto& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  // HealthCheckResponse{status: SERVING} is field 1, varint 1.
  if (bytes == std::string("\x08\x01", 2)) {
    out << "probe: schedplug-host at " << listen << " is SERVING\n";
    return 0;
  }
  out << "probe: schedplug-host at " << listen
      << " answered but is not SERVING (shutting down, or a plugin hook "
         "exceeded --hook-hard-limit)\n";
  return 1;
}

namespace {

std::string utc(int64_t unix_nanos) {
  const std::time_t seconds = static_cast<std::time_t>(unix_nanos / 1000000000);
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(seconds));
}

}  // namespace

bool print_host_status(const std::string& listen,
                       std::chrono::milliseconds timeout, std::ostream& out,
                       const ProbeTls& tls) {
  std::shared_ptr<grpc::Channel> channel;
  try {
    channel = dial_host(listen, tls);
  } catch (const std::invalid_argument& e) {
    out << "probe: " << e.what() << "\n";
    return false;
  }
  const auto stub = v1::Host::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::StatusResponse status;
  const grpc::Status s = stub->Status(&context, v1::StatusRequest(), &status);
  if (!s.ok()) {
    out << "probe: schedplug-host at " << listen
        << " did not tell its status: " << s.error_message() << "\n";
    return false;
  }
  out << fmt::format(
      "plugin set {} (host epoch {:016x}, build {:016x}); {}; {} reload{} "
      "swapped plugins in{}\n",
      status.plugin_set_generation(), status.identity().epoch(),
      status.identity().build(),
      status.watching() ? "watching its plugin directory and configuration"
                        : "not watching its files (--no-watch; SIGHUP "
                          "reloads)",
      status.reloads(), status.reloads() == 1 ? "" : "s",
      status.last_reload_unix_nanos() == 0
          ? std::string()
          : ", the last reload looked at " +
                utc(status.last_reload_unix_nanos()));
  for (const v1::PluginBuild& b : status.plugins()) {
    out << fmt::format("  {} {}  {}  sha256 {}\n", b.plugin(), b.version(),
                       b.file(), b.sha256());
  }
  if (status.shadows().empty()) {
    out << "no shadow candidate runs\n";
  } else {
    out << fmt::format(
        "{} shadow candidate{} run{} beside the live plugin{} (decisions stay "
        "the live plugins'):\n",
        status.shadows_size(), status.shadows_size() == 1 ? "" : "s",
        status.shadows_size() == 1 ? "s" : "",
        status.shadows_size() == 1 ? "" : "s");
    for (const v1::PluginBuild& b : status.shadows()) {
      out << fmt::format("  {} candidate {}  {}  sha256 {}\n", b.plugin(),
                         b.version(), b.file(), b.sha256());
    }
  }
  if (status.refused().empty()) {
    out << "no refused change stands\n";
    return true;
  }
  out << fmt::format(
      "{} refused change{} stand{} (the host keeps serving the builds above; "
      "fix or replace the file):\n",
      status.refused_size(), status.refused_size() == 1 ? "" : "s",
      status.refused_size() == 1 ? "s" : "");
  for (const v1::RefusedChange& r : status.refused()) {
    out << fmt::format("  {} [{}] since {}: {}\n", r.file(), r.reason(),
                       utc(r.unix_nanos()), r.message());
  }
  return true;
}

}  // namespace schedplug::host
