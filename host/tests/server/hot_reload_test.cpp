// Hot reload (host/reload/): a changed plugin file or configuration is
// checked as at start-up and swapped in between calls; calls and pod
// cycles already begun finish on the version they began with; a file or
// configuration that fails any check is refused, counted and logged, and
// the loaded version keeps serving; the answers' identity changes with
// every swap, and the session watch says so at once.
// One file: every case drives the same reload fixture (a plugin directory and
// configuration replaced in place, the reloadable_vN builds) and checks which
// version answers.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "host/loader/plugin_file_check.hpp"
#include "host/reload/plugin_reload.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kProfile[] = "reload-scheduler";

std::filesystem::path version_file(int v) {
  return std::filesystem::path(SCHEDPLUG_RELOADABLE_DIR) /
         ("reloadable_v" + std::to_string(v) + ".so");
}

// Writes `bytes` beside `to` and renames it into place, as an admin's
// `install` or a deployment tool does.
void replace_file(const std::filesystem::path& to, const std::string& bytes) {
  const auto tmp = to.parent_path() / (".tmp-" + to.filename().string());
  std::ofstream(tmp, std::ios::binary) << bytes;
  std::filesystem::permissions(tmp, std::filesystem::perms(0755));
  std::filesystem::rename(tmp, to);
}

// The refusals of a reload, one sentence a line (for failure messages).
std::string refusals(const ReloadOutcome& outcome) {
  std::string out;
  for (const ReloadRefusal& r : outcome.refused) out += r.message + "\n";
  return out;
}

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The configuration with Reloadable's args written as `args` (YAML, on the
// line after "args:").
void write_config_args(const std::filesystem::path& file,
                       const std::string& args) {
  std::ofstream(file) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: reload-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: Reloadable
    pluginConfig:
      - name: Reloadable
        args: )" << args
                      << "\n";
}

void write_config(const std::filesystem::path& file,
                  const std::string& reject_node) {
  write_config_args(file, "{reject_node: \"" + reject_node + "\"}");
}

class HotReload : public ::testing::Test {
 protected:
  // `watch`: the host watches the directories itself (else the test calls
  // reload()). `configmap`: the plugin directory is laid out as a
  // ConfigMap volume (NAME.so -> ..data/NAME.so, ..data -> a dated dir).
  void start(bool watch, bool configmap = false) {
    plugins_ = dir_.path() / "plugins";
    std::filesystem::create_directory(plugins_);
    config_ = dir_.path() / "config.yaml";
    write_config(config_, "node-9");
    if (configmap) {
      write_configmap_version(1, "..2026_12_04_a");
      std::filesystem::create_directory_symlink("..2026_12_04_a",
                                                plugins_ / "..data");
      std::filesystem::create_symlink("..data/reloadable.so",
                                      plugins_ / "reloadable.so");
    } else {
      install(1);
    }
    host_ = std::make_unique<RunningHost>([&](HostOptions& o) {
      o.config = config_;
      o.plugins = plugins_;
      o.watch = watch;
      o.reload_settle = 50ms;
    });
    session_ = handshake().session_id();
    ASSERT_TRUE(last_handshake_.ok()) << last_handshake_.error_message();
    nodes_ = v1::NodeTableDelta();
    nodes_.set_full(true);
    nodes_.set_new_version(1);
    for (uint32_t slot = 0; slot < 12; ++slot) {
      v1::Node* n = nodes_.add_upserts();
      n->set_index(slot);
      n->set_name("node-" + std::to_string(slot));
      n->set_generation(1);
      // node-1 is rejected by v1, node-2 by v2.
      if (slot == 1 || slot == 2) {
        v1::KeyValue* kv = n->add_labels();
        kv->set_key("reload/reject-v" + std::to_string(slot));
        kv->set_value("yes");
      }
    }
  }

  void install(int version) {
    replace_file(plugins_ / "reloadable.so", read_all(version_file(version)));
  }
  void write_configmap_version(int version, const std::string& dated) {
    std::filesystem::create_directory(plugins_ / dated);
    std::filesystem::copy_file(version_file(version),
                               plugins_ / dated / "reloadable.so");
  }
  // kubelet's atomic update of a ConfigMap volume: a new dated directory,
  // then ..data swapped to it by renaming a symlink over it.
  void configmap_swap(int version, const std::string& dated) {
    write_configmap_version(version, dated);
    std::filesystem::create_directory_symlink(dated, plugins_ / "..data_tmp");
    std::filesystem::rename(plugins_ / "..data_tmp", plugins_ / "..data");
  }

  // The Handshake of a kube-scheduler that read the configuration with
  // Reloadable's args {"reject_node": `reject_node`}.
  v1::HandshakeResponse handshake(const std::string& reject_node = "node-9") {
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    request.set_client_id("reload-test");
    v1::ProfilePlugins* p = request.add_profiles();
    p->set_scheduler_name(kProfile);
    p->add_plugins("Reloadable");
    v1::PluginSettings* settings = p->add_settings();
    settings->set_name("Reloadable");
    settings->set_args_json(R"({"reject_node":")" + reject_node + "\"}");
    settings->set_failure_policy("Fail");
    v1::HandshakeResponse response;
    if (in_process_) {
      grpc::ServerContext context;
      last_handshake_ =
          host_->app().service().Handshake(&context, &request, &response);
    } else {
      grpc::ClientContext context;
      last_handshake_ = host_->stub().Handshake(&context, request, &response);
    }
    return response;
  }

  v1::Pod pod(const std::string& name) {
    v1::Pod p;
    p.set_namespace_("default");
    p.set_name(name);
    p.set_uid("uid-" + name);
    return p;
  }

  // PreFilter of `p` over the 12 nodes: node name -> reason.
  std::map<std::string, std::string> pre_filter(
      const v1::Pod& p, v1::HostIdentity* identity = nullptr) {
    v1::PreFilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    if (!sent_table_) {
      *request.mutable_delta() = nodes_;
      sent_table_ = true;
    } else {
      request.mutable_delta()->set_base_version(1);
      request.mutable_delta()->set_new_version(1);
    }
    v1::PreFilterResponse response;
    grpc::ClientContext context;
    const grpc::Status s =
        host_->stub().PreFilter(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (identity != nullptr) *identity = response.identity();
    std::map<std::string, std::string> rejected;
    for (int i = 0; i < response.rejected_nodes_size(); ++i) {
      rejected["node-" + std::to_string(response.rejected_nodes(i))] =
          response.reasons(static_cast<int>(response.reason(i)));
    }
    return rejected;
  }

  // The single-node Filter of `p` on node `slot`: its reason ("" fits).
  std::string filter(const v1::Pod& p, uint32_t slot) {
    v1::FilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    *request.mutable_node() = nodes_.upserts(static_cast<int>(slot));
    v1::FilterResponse response;
    grpc::ClientContext context;
    const grpc::Status s = host_->stub().Filter(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.reason();
  }

  uint64_t generation() {
    return host_->app().pipeline().plugins()->generation;
  }
  bool wait_for_generation(uint64_t want) {
    for (auto until = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < until;) {
      if (generation() >= want) return generation() == want;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  std::string metrics() { return host_->app().metrics().text(); }

  TempDir dir_;
  std::filesystem::path plugins_;
  std::filesystem::path config_;
  std::unique_ptr<RunningHost> host_;
  std::string session_;
  v1::NodeTableDelta nodes_;
  bool sent_table_ = false;
  grpc::Status last_handshake_;
  // Call the service in-process, never through gRPC (for TSan, which
  // cannot see inside Debian's uninstrumented gRPC).
  bool in_process_ = false;
};

const std::map<std::string, std::string> kV1{
    {"node-1", "rejected by Reloadable v1"},
    {"node-9", "rejected by Reloadable v1 (args)"}};
const std::map<std::string, std::string> kV2{
    {"node-2", "rejected by Reloadable v2"},
    {"node-9", "rejected by Reloadable v2 (args)"}};

TEST_F(HotReload, AReplacedFileServesTheNextCallAndChangesTheIdentity) {
  start(/*watch=*/true);
  v1::HostIdentity before, after;
  EXPECT_EQ(pre_filter(pod("a"), &before), kV1);
  install(2);
  ASSERT_TRUE(wait_for_generation(2)) << metrics();
  EXPECT_EQ(pre_filter(pod("b"), &after), kV2);
  EXPECT_EQ(after.epoch(), before.epoch()) << "the same host process";
  EXPECT_NE(after.build(), before.build()) << "another plugin build";
  const v1::HandshakeResponse hs = handshake();
  ASSERT_TRUE(last_handshake_.ok()) << last_handshake_.error_message();
  ASSERT_EQ(hs.plugins_size(), 1);
  EXPECT_EQ(hs.plugins(0).version(), "2.0.0");
  EXPECT_EQ(hs.identity().build(), after.build());
  const std::string m = metrics();
  EXPECT_NE(m.find("schedplug_reloads_total 1"), std::string::npos) << m;
  EXPECT_NE(m.find("schedplug_plugin_set_generation 2"), std::string::npos);
  EXPECT_NE(m.find("schedplug_plugin_build_info{file=\"reloadable.so\","
                   "plugin=\"Reloadable\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("version=\"2.0.0\""), std::string::npos) << m;
  EXPECT_EQ(m.find("version=\"1.0.0\""), std::string::npos)
      << "only the serving build is listed\n"
      << m;
}

TEST_F(HotReload, AConfigMapDataSwapIsPickedUp) {
  start(/*watch=*/true, /*configmap=*/true);
  EXPECT_EQ(pre_filter(pod("a")), kV1);
  configmap_swap(2, "..2026_12_04_b");
  ASSERT_TRUE(wait_for_generation(2)) << metrics();
  EXPECT_EQ(pre_filter(pod("b")), kV2);
  // And back: the old dated directory's file is a new load, not a cached
  // alias of the first.
  configmap_swap(1, "..2026_12_04_c");
  ASSERT_TRUE(wait_for_generation(3)) << metrics();
  EXPECT_EQ(pre_filter(pod("c")), kV1);
}

TEST_F(HotReload, ACycleBegunBeforeTheSwapFinishesOnItsVersion) {
  start(/*watch=*/false);
  const v1::Pod a = pod("a");
  EXPECT_EQ(pre_filter(a), kV1);
  install(2);
  const ReloadOutcome outcome = host_->app().reload();
  ASSERT_TRUE(outcome.swapped);
  EXPECT_EQ(outcome.generation, 2u);
  // Pod a's cycle began on v1: its single-node Filter runs v1.
  EXPECT_EQ(filter(a, 1), "rejected by Reloadable v1");
  EXPECT_EQ(filter(a, 2), "");
  // A new cycle runs v2.
  const v1::Pod b = pod("b");
  EXPECT_EQ(pre_filter(b), kV2);
  EXPECT_EQ(filter(b, 2), "rejected by Reloadable v2");
}

TEST_F(HotReload, ChangedArgsTakeEffectAndUnchangedOnesKeepTheInstance) {
  start(/*watch=*/false);
  EXPECT_EQ(pre_filter(pod("a")), kV1);
  const PluginInstance* before =
      host_->app().pipeline().plugins()->created->profiles()[0].plugins[0];
  // Nothing changed: no swap.
  EXPECT_FALSE(host_->app().reload().swapped);
  write_config(config_, "node-7");
  const ReloadOutcome outcome = host_->app().reload();
  ASSERT_TRUE(outcome.swapped) << refusals(outcome);
  EXPECT_EQ(pre_filter(pod("b")),
            (std::map<std::string, std::string>{
                {"node-1", "rejected by Reloadable v1"},
                {"node-7", "rejected by Reloadable v1 (args)"}}));
  EXPECT_NE(
      host_->app().pipeline().plugins()->created->profiles()[0].plugins[0],
      before)
      << "new args: a new instance";
  // kube-scheduler still has the old args: a new session is not refused
  // as config skew; a scheduler started since has the new ones; other
  // args than either are skew.
  handshake("node-9");
  EXPECT_TRUE(last_handshake_.ok()) << last_handshake_.error_message();
  handshake("node-7");
  EXPECT_TRUE(last_handshake_.ok()) << last_handshake_.error_message();
  handshake("node-5");
  EXPECT_EQ(last_handshake_.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(last_handshake_.error_message().find("config"), std::string::npos)
      << last_handshake_.error_message();
}

// A plugin copied into the directory in two parts with a pause between
// them (a slow `cp`, a network copy): the watch waits for the writer to
// close the file, and the loader would refuse the incomplete file anyway,
// so the host never dlopens it (which mapped past the end of the file and
// died of SIGBUS) and the loaded version serves meanwhile.
TEST_F(HotReload, AFileCopiedInPartsIsLoadedOnceWhole) {
  start(/*watch=*/true);
  EXPECT_EQ(pre_filter(pod("a")), kV1);
  // The old file goes first, so the copy creates a new one.
  std::filesystem::remove(plugins_ / "reloadable.so");
  const std::string v2 = read_all(version_file(2));
  const int fd = ::open((plugins_ / "reloadable.so").c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
  ASSERT_GE(fd, 0);
  const size_t half = v2.size() / 2;
  ASSERT_EQ(::write(fd, v2.data(), half), static_cast<ssize_t>(half));
  // Well past the settle time: the host must not load the first half.
  std::this_thread::sleep_for(20 * 50ms);
  EXPECT_EQ(pre_filter(pod("b")), kV1);
  EXPECT_EQ(generation(), 1u);
  ASSERT_EQ(::write(fd, v2.data() + half, v2.size() - half),
            static_cast<ssize_t>(v2.size() - half));
  ::close(fd);
  ASSERT_TRUE(wait_for_generation(2)) << metrics();
  EXPECT_EQ(pre_filter(pod("c")), kV2);
  // The watch waited for the writer: the half file was never tried (the
  // series exists, at zero, from start-up).
  EXPECT_NE(metrics().find("schedplug_reloads_refused_total{file="
                           "\"reloadable.so\",reason=\"load\"} 0\n"),
            std::string::npos)
      << metrics();
}

// The watch's wait for a writer is bounded; a reload that finds the file
// still incomplete refuses it with a sentence and keeps the loaded
// version (start-up and reload use the same loader).
TEST_F(HotReload, AnIncompleteFileIsRefusedAndTheLoadedVersionServes) {
  start(/*watch=*/false);
  EXPECT_EQ(pre_filter(pod("a")), kV1);
  const std::string v2 = read_all(version_file(2));
  replace_file(plugins_ / "reloadable.so", v2.substr(0, v2.size() / 2));
  const ReloadOutcome outcome = host_->app().reload();
  EXPECT_FALSE(outcome.swapped);
  ASSERT_EQ(outcome.refused.size(), 1u);
  EXPECT_NE(outcome.refused[0].message.find("the file is incomplete"),
            std::string::npos)
      << outcome.refused[0].message;
  EXPECT_EQ(pre_filter(pod("b")), kV1);
}

// A configuration whose args hold an anchor with an alias to itself used
// to send the reader into endless recursion: at reload it is refused with
// the line, and the loaded configuration keeps serving.
TEST_F(HotReload, ARecursiveAnchorInTheConfigurationIsRefused) {
  start(/*watch=*/false);
  EXPECT_EQ(pre_filter(pod("a")), kV1);
  write_config_args(config_, "&a {reject_node: node-9, loop: *a}");
  const ReloadOutcome outcome = host_->app().reload();
  EXPECT_FALSE(outcome.swapped);
  ASSERT_EQ(outcome.refused.size(), 1u);
  EXPECT_NE(outcome.refused[0].message.find(
                "config.yaml:11: this value (an anchor, &name) contains an "
                "alias (*name) to itself"),
            std::string::npos)
      << outcome.refused[0].message;
  EXPECT_EQ(pre_filter(pod("b")), kV1);
}

// Files are opened under the pins of the configuration read with them.
// When that configuration is refused (here: a new profile needs a
// scheduler restart), the file-by-file path must hold the files to the
// pins of the configuration that stays, or changing a pin in a refused
// configuration would smuggle in a build the serving one forbids.
TEST_F(HotReload, APinOfARefusedConfigurationAdmitsNoFile) {
  const auto pinned = [&](const std::string& digest, bool second_profile) {
    std::string profile = R"(
  - schedulerName: NAME
    plugins:
      multiPoint:
        enabled:
          - name: Reloadable
    pluginConfig:
      - name: Reloadable
        args:
          reject_node: node-9
          schedplug:
            sha256: ")" + digest +
                          "\"\n";
    const auto named = [&](const std::string& name) {
      std::string p = profile;
      p.replace(p.find("NAME"), 4, name);
      return p;
    };
    std::ofstream(config_) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           << "kind: KubeSchedulerConfiguration\n"
                           << "profiles:" << named(kProfile)
                           << (second_profile ? named("second") : "");
  };
  start(/*watch=*/false);
  pinned(file_sha256(version_file(1)), false);
  ReloadOutcome outcome = host_->app().reload();
  ASSERT_TRUE(outcome.swapped) << refusals(outcome);
  EXPECT_EQ(pre_filter(pod("a")), kV1);

  pinned(file_sha256(version_file(2)), true);
  install(2);
  outcome = host_->app().reload();
  EXPECT_FALSE(outcome.swapped) << "the host serves a build its pins forbid";
  const std::string why = refusals(outcome);
  EXPECT_NE(why.find("restart"), std::string::npos) << why;
  EXPECT_NE(why.find("reloadable.so: refused: plugin \"Reloadable\" (SHA-256 " +
                     file_sha256(version_file(2)) + ") may not serve under " +
                     config_.string() + ", which pins " +
                     file_sha256(version_file(1))),
            std::string::npos)
      << why;
  EXPECT_EQ(pre_filter(pod("b")), kV1);
}

TEST_F(HotReload, RefusedChangesKeepTheLoadedVersionAndAreCounted) {
  start(/*watch=*/true);
  EXPECT_EQ(pre_filter(pod("a")), kV1);

  // A broken file.
  replace_file(plugins_ / "reloadable.so", "not an ELF file");
  const auto wait_for_refusals = [&](const std::string& series) {
    for (auto until = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < until;) {
      if (metrics().find(series) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  };
  ASSERT_TRUE(wait_for_refusals(
      "schedplug_reloads_refused_total{file=\"reloadable.so\",reason=\"load\"} "
      "1"))
      << metrics();
  EXPECT_EQ(pre_filter(pod("b")), kV1);

  // A version that refuses its args.
  install(3);
  ASSERT_TRUE(wait_for_refusals(
      "schedplug_reloads_refused_total{file=\"reloadable.so\",reason="
      "\"create\"} 1"))
      << metrics();
  EXPECT_EQ(pre_filter(pod("c")), kV1);

  // A version that declares other events than kube-scheduler registered.
  install(4);
  ASSERT_TRUE(wait_for_refusals(
      "schedplug_reloads_refused_total{file=\"reloadable.so\",reason="
      "\"restart_needed\"} 1"))
      << metrics();
  EXPECT_EQ(pre_filter(pod("d")), kV1);

  // A configuration that does not parse.
  std::ofstream(config_) << "profiles: [unclosed\n";
  ASSERT_TRUE(wait_for_refusals(
      "schedplug_reloads_refused_total{file=\"config.yaml\",reason=\"config\"} "
      "1"))
      << metrics();
  EXPECT_EQ(generation(), 1u);

  // The messages say what failed and what to do.
  write_config(config_, "node-9");
  install(4);
  const ReloadOutcome outcome = host_->app().reload();
  EXPECT_FALSE(outcome.swapped);
  ASSERT_EQ(outcome.refused.size(), 1u);
  EXPECT_NE(
      outcome.refused[0].message.find("declares events 0x3ff where the running "
                                      "version declared 0x5"),
      std::string::npos)
      << outcome.refused[0].message;
  EXPECT_NE(outcome.refused[0].message.find("restart of the scheduler"),
            std::string::npos);

  // The health details show the refusal while it stands.
  const auto status = [&] {
    grpc::ClientContext context;
    v1::StatusResponse response;
    EXPECT_TRUE(
        host_->stub().Status(&context, v1::StatusRequest(), &response).ok());
    return response;
  };
  v1::StatusResponse standing = status();
  EXPECT_EQ(standing.plugin_set_generation(), 1u);
  EXPECT_TRUE(standing.watching());
  ASSERT_EQ(standing.refused_size(), 1);
  EXPECT_EQ(standing.refused(0).file(), "reloadable.so");
  EXPECT_EQ(standing.refused(0).reason(), "restart_needed");
  EXPECT_GT(standing.refused(0).unix_nanos(), 0);
  std::ostringstream details;
  ASSERT_TRUE(print_host_status(host_->app().target(), 2s, details));
  EXPECT_NE(details.str().find("plugin set 1 "), std::string::npos)
      << details.str();
  EXPECT_NE(details.str().find("  Reloadable 1.0.0  reloadable.so  sha256 "),
            std::string::npos)
      << details.str();
  EXPECT_NE(details.str().find("1 refused change stands"), std::string::npos)
      << details.str();
  EXPECT_NE(details.str().find("reloadable.so [restart_needed] since "),
            std::string::npos)
      << details.str();

  // A good version after all that is taken, and no refusal stands.
  install(2);
  ASSERT_TRUE(wait_for_generation(2)) << metrics();
  EXPECT_EQ(pre_filter(pod("e")), kV2);
  standing = status();
  EXPECT_EQ(standing.plugin_set_generation(), 2u);
  EXPECT_EQ(standing.reloads(), 1u);
  EXPECT_EQ(standing.refused_size(), 0) << standing.DebugString();
  ASSERT_EQ(standing.plugins_size(), 1);
  EXPECT_EQ(standing.plugins(0).version(), "2.0.0");
}

TEST_F(HotReload, ARemovedFileKeepsTheLoadedVersion) {
  start(/*watch=*/false);
  std::filesystem::remove(plugins_ / "reloadable.so");
  const ReloadOutcome outcome = host_->app().reload();
  EXPECT_FALSE(outcome.swapped);
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_NE(outcome.warnings[0].find("keeps running version 1.0.0"),
            std::string::npos)
      << outcome.warnings[0];
  EXPECT_EQ(pre_filter(pod("a")), kV1);
}

TEST_F(HotReload, TheSessionWatchCarriesTheNewIdentityAtOnce) {
  start(/*watch=*/false);
  grpc::ClientContext context;
  v1::WatchSessionRequest request;
  request.set_session_id(session_);
  auto stream = host_->stub().WatchSession(&context, request);
  v1::SessionEvent first;
  ASSERT_TRUE(stream->Read(&first));
  install(2);
  ASSERT_TRUE(host_->app().reload().swapped);
  v1::SessionEvent next;
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream->Read(&next));
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 1s)
      << "sooner than the 2 s heartbeat";
  EXPECT_EQ(next.identity().epoch(), first.identity().epoch());
  EXPECT_NE(next.identity().build(), first.identity().build());
  context.TryCancel();
}

// Callers call the service in-process (so that TSan sees every thread:
// tools/dev/sanitize.sh runs this suite) while the main thread swaps v1 and
// v2 back and forth. Every answer is exactly one version's, and carries
// that version's identity build: no call mixes two versions, and none says
// it came from a build that did not compute it.
class HotReloadInProcess : public HotReload {
 protected:
  HotReloadInProcess() { in_process_ = true; }
};

TEST_F(HotReloadInProcess, CallsRacingSwapsAnswerWithTheirOwnVersion) {
  start(/*watch=*/false);
  HostService& service = host_->app().service();
  std::mutex mutex;
  std::map<uint64_t, int> version_of_build;  // learned from the answers
  std::atomic<bool> stop{false};
  std::atomic<int> answers{0};
  std::vector<std::string> failures;
  const auto fail = [&](std::string what) {
    std::lock_guard lock(mutex);
    failures.push_back(std::move(what));
  };
  const auto caller = [&](int id) {
    v1::HandshakeRequest hs_request;
    hs_request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    hs_request.set_client_id("racer-" + std::to_string(id));
    hs_request.add_profiles()->set_scheduler_name(kProfile);
    hs_request.mutable_profiles(0)->add_plugins("Reloadable");
    v1::HandshakeResponse hs;
    {
      grpc::ServerContext context;
      if (!service.Handshake(&context, &hs_request, &hs).ok())
        return fail("handshake");
    }
    for (int i = 0; !stop.load(); ++i) {
      v1::PreFilterRequest request;
      request.set_session_id(hs.session_id());
      request.set_scheduler_name(kProfile);
      *request.mutable_pod() =
          pod("racer-" + std::to_string(id) + "-" + std::to_string(i));
      if (i == 0) {
        *request.mutable_delta() = nodes_;
      } else {
        request.mutable_delta()->set_base_version(1);
        request.mutable_delta()->set_new_version(1);
      }
      v1::PreFilterResponse response;
      grpc::ServerContext context;
      const grpc::Status s = service.PreFilter(&context, &request, &response);
      if (!s.ok()) return fail("PreFilter: " + s.error_message());
      std::map<std::string, std::string> rejected;
      for (int r = 0; r < response.rejected_nodes_size(); ++r) {
        rejected["node-" + std::to_string(response.rejected_nodes(r))] =
            response.reasons(static_cast<int>(response.reason(r)));
      }
      const int version = rejected == kV1 ? 1 : rejected == kV2 ? 2 : 0;
      if (version == 0) return fail("an answer of neither version");
      std::lock_guard lock(mutex);
      const auto [it, added] =
          version_of_build.emplace(response.identity().build(), version);
      if (it->second != version) {
        failures.push_back("build " + std::to_string(it->first) +
                           " answered as v1 and as v2");
        return;
      }
      answers.fetch_add(1);
    }
  };
  std::vector<std::thread> callers;
  for (int id = 0; id < 3; ++id) callers.emplace_back(caller, id);
  int swaps = 0;
  for (int round = 0; round < 20; ++round) {
    install(round % 2 == 0 ? 2 : 1);
    swaps += host_->app().reload().swapped ? 1 : 0;
    std::this_thread::sleep_for(5ms);
  }
  stop = true;
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures, std::vector<std::string>{});
  EXPECT_EQ(swaps, 20);
  EXPECT_GT(answers.load(), 20);
  // Two builds only (v1's and v2's), however often each came back: the
  // build is the content, not the load.
  EXPECT_EQ(version_of_build.size(), 2u);
}

}  // namespace
}  // namespace schedplug::host::testing
