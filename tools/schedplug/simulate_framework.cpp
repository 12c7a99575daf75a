#include "tools/schedplug/simulate_framework.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "host/app/host_app.hpp"
#include "tools/schedplug/child_process.hpp"

namespace schedplug::tools {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// A private directory for the host's socket, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "schedplug-simulate-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(
          "cannot create a directory for the host's "
          "socket under " +
          fs::temp_directory_path().string());
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A node's filter cells from kube-scheduler's verdict: the plugin that
// rejected it (when it is one of the profile's filters) stops the others.
void fill_filters(ExplainRow& row, const Json& node,
                  const std::vector<std::string>& filters,
                  const std::vector<bool>& skipped) {
  if (row.feasible) {
    row.filters = filter_cells(skipped, std::nullopt, "", "");
    return;
  }
  const std::string plugin = node.value("plugin", "");
  const auto at = std::find(filters.begin(), filters.end(), plugin);
  if (at != filters.end()) {
    row.rejected_by = plugin;
    row.filters =
        filter_cells(skipped, static_cast<size_t>(at - filters.begin()),
                     node.value("code", ""), node.value("reason", ""));
    return;
  }
  // Turned away before any filter ran (PreFilter, or a PreFilter that
  // named the only nodes worth filtering): no filter cell holds the
  // reason, so the row's heading does.
  row.rejected_by =
      (plugin.empty() ? std::string("PreFilter") : plugin + " at PreFilter") +
      ": " + node.value("reason", "");
  row.filters.assign(filters.size(), {"NotRun", ""});
}

// The native plugins' own raw scores of the pods simulate explains. What
// kube-scheduler calls a native plugin's raw score is what the shim's
// Score returned: the score schedplug-host (or the shim, for scores
// computed ahead) already normalized. The host's recent cycles
// (`schedplug explain`) keeps the plugin's raw ones.
class NativeRaw {
 public:
  // Reads them from `host`, which served the simulation, for `pods`.
  void read(const host::HostApp& host,
            const std::vector<const KubePod*>& pods) {
    const auto plugins = host.pipeline().plugins();
    for (const auto& profile : plugins->created->profiles()) {
      for (const host::PluginInstance* s : profile.scorers) {
        native_[profile.scheduler_name].insert(s->name());
      }
    }
    for (const KubePod* pod : pods) {
      const auto found = host.recent_cycles().find(pod->key());
      // The latest cycle that scored: the one whose scores kube-scheduler
      // kept (a later one would have replaced those too).
      for (auto c = found.cycles.rbegin(); c != found.cycles.rend(); ++c) {
        bool scored = false;
        for (const auto& node : c->nodes()) {
          if (!node.scored()) continue;
          scored = true;
          for (int k = 0; k < c->scorers_size() && k < node.raw_size(); ++k) {
            raw_[{pod->key(), node.node(), c->scorers(k)}] = node.raw(k);
          }
        }
        if (scored) break;
      }
    }
  }
  bool native(const std::string& profile, const std::string& plugin) const {
    const auto it = native_.find(profile);
    return it != native_.end() && it->second.count(plugin) > 0;
  }
  std::optional<int64_t> raw(const std::string& pod, const std::string& node,
                             const std::string& plugin) const {
    const auto it = raw_.find({pod, node, plugin});
    if (it == raw_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, std::set<std::string>> native_;
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> raw_;
};

ExplainTable explain_table(const Json& explain, const SimulatedProfile& profile,
                           const std::vector<std::string>& top,
                           const std::string& pod, const NativeRaw& native) {
  ExplainTable table;
  table.filters = profile.filters;
  table.scorers = profile.scorers;
  table.weights = profile.weights;
  std::vector<bool> skipped;
  for (const std::string& f : profile.filters) {
    const Json& names = explain.at("skipped_filters");
    skipped.push_back(std::find(names.begin(), names.end(), f) != names.end());
  }
  for (const Json& node : explain.at("nodes")) {
    ExplainRow row;
    row.node = node.at("node").get<std::string>();
    row.feasible = node.at("feasible").get<bool>();
    fill_filters(row, node, profile.filters, skipped);
    if (node.value("scored", false)) {
      row.scored = true;
      row.total = node.at("total").get<int64_t>();
      for (size_t p = 0; p < profile.scorers.size(); ++p) {
        ExplainScoreCell cell;
        cell.skipped = true;  // no score: PreScore skipped the pod
        for (const Json& s : node.value("scores", Json::array())) {
          if (s.at("plugin") != profile.scorers[p]) continue;
          const int weight = std::max(profile.weights[p], 1);
          cell.skipped = false;
          cell.raw = s.at("raw").get<int64_t>();
          cell.normalized = s.at("weighted").get<int64_t>() / weight;
          if (native.native(profile.name, profile.scorers[p])) {
            const auto raw = native.raw(pod, row.node, profile.scorers[p]);
            cell.raw = raw.value_or(0);
            cell.raw_known = raw.has_value();
          }
        }
        row.scores.push_back(cell);
      }
    }
    if (!top.empty() && row.node == top.front()) {
      row.mark = ExplainRow::Mark::kChosen;
    } else if (std::find(top.begin(), top.end(), row.node) != top.end()) {
      row.mark = ExplainRow::Mark::kTied;
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

// kube-scheduler-simulate's JSON (integration/scheduler/simulate/result.go)
// as the report, the pods in `pending`'s order.
void read_result(const Json& j, const std::vector<const KubePod*>& pending,
                 const NativeRaw& native, SimulationReport& report,
                 std::ostream& err) {
  report.scheduler =
      "kube-scheduler " + j.at("kube_scheduler").get<std::string>();
  std::map<std::string, size_t> profile_at;
  for (const Json& p : j.at("profiles")) {
    SimulatedProfile sp;
    sp.name = p.at("name").get<std::string>();
    sp.filters = p.at("filters").get<std::vector<std::string>>();
    for (const Json& s : p.at("scores")) {
      sp.scorers.push_back(s.at("plugin").get<std::string>());
      sp.weights.push_back(s.at("weight").get<int>());
    }
    profile_at[sp.name] = report.profiles.size();
    report.profiles.push_back(std::move(sp));
  }
  std::map<std::string, const Json*> by_pod;
  for (const Json& p : j.at("pods"))
    by_pod[p.at("pod").get<std::string>()] = &p;
  for (const KubePod* pod : pending) {
    const auto found = by_pod.find(pod->key());
    if (found == by_pod.end()) {
      throw std::runtime_error(
          "kube-scheduler-simulate reported nothing for "
          "pod " +
          pod->key() +
          "; it does not match this schedplug (rebuild "
          "both from one checkout)");
    }
    const Json& r = *found->second;
    SimulatedPod s;
    s.pod = pod;
    s.status = r.at("status").get<std::string>();
    if (s.status != "skipped") s.profile = r.at("profile").get<std::string>();
    s.top = r.at("tie").get<std::vector<std::string>>();
    if (s.top.empty() && r.contains("node")) {
      s.top.push_back(r.at("node").get<std::string>());
    }
    s.score = r.value("score", int64_t{0});
    s.scored = r.value("scored", false);
    s.feasible = r.value("feasible_nodes", size_t{0});
    s.reason = r.value("reason", "");
    s.nominated_node = r.value("nominated_node", "");
    if (r.contains("explain") && profile_at.count(s.profile)) {
      s.explain =
          explain_table(r.at("explain"), report.profiles[profile_at[s.profile]],
                        s.top, pod->key(), native);
    }
    report.pods.push_back(std::move(s));
  }
  for (const Json& e : j.at("evicted")) {
    report.evicted.push_back({e.at("pod").get<std::string>(),
                              e.at("node").get<std::string>(),
                              e.at("by").get<std::string>()});
  }
  for (const Json& w : j.at("warnings")) {
    err << "warning: " << w.get<std::string>() << "\n";
  }
}

}  // namespace

fs::path find_simulator(const fs::path& flag) {
  if (!flag.empty()) return executable(flag) ? flag : fs::path();
  if (const char* env = std::getenv(kSimulatorEnv); env && *env) {
    return executable(env) ? fs::path(env) : fs::path();
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && executable(self.parent_path() / kSimulatorName)) {
    return self.parent_path() / kSimulatorName;
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.empty() && executable(fs::path(dir) / kSimulatorName)) {
        return fs::path(dir) / kSimulatorName;
      }
    }
  }
  return {};
}

int simulate_with_kube_scheduler(const SimulateOptions& options,
                                 const std::vector<const KubePod*>& pending,
                                 const std::set<const KubePod*>& explain,
                                 SimulationReport& report, std::ostream& err) {
  // The host exactly as schedplug-host starts: the same checks and
  // messages, the plugins created with their args; on a socket of its own.
  const TempDir dir;
  host::HostOptions host_options;
  host_options.config = options.config;
  host_options.plugins = options.plugins;
  host_options.listen = "unix://" + (dir.path() / "host.sock").string();
  host_options.watch = false;
  host_options.hook_hard_limit = std::chrono::milliseconds(0);
  host_options.memory_trim_interval = std::chrono::milliseconds(0);
  // Room for the last cycles of the pods explained, whose native raw
  // scores come from the host's recent cycles (NativeRaw).
  host_options.service.recent_cycles.max_cycles = std::max(
      host_options.service.recent_cycles.max_cycles, 4 * explain.size());
  std::ostringstream diagnostics;
  std::unique_ptr<host::HostApp> host;
  try {
    host = host::HostApp::start(host_options, diagnostics);
  } catch (const host::StartupError& e) {
    err << diagnostics.str() << "error: " << e.what() << "\n";
    return kSimulateBadInput;
  }
  err << diagnostics.str();

  const fs::path simulator = find_simulator(options.simulator);
  if (simulator.empty()) {
    err << "error: cannot find " << kSimulatorName << ", the kube-scheduler "
        << "simulate runs on the dumps ("
        << (options.simulator.empty()
                ? std::string("looked at $") + kSimulatorEnv +
                      ", beside schedplug and on PATH"
                : "--simulator " + options.simulator.string() +
                      " is not an executable file")
        << "). Install it with schedplug, build it with `cd integration && "
           "go build -o DIR/"
        << kSimulatorName << " ./scheduler/cmd/" << kSimulatorName
        << "` (tools/dev/test.sh and demo.sh put it beside schedplug), give "
           "its path with --simulator, or add --native-only to run only the "
           "native plugins\n";
    return kSimulateBadInput;
  }

  // Its own deadline comes first, so a slow run ends with its account of
  // what is still queued rather than this process's timeout.
  const std::chrono::seconds go_timeout =
      options.timeout > std::chrono::seconds(10)
          ? options.timeout - std::chrono::seconds(5)
          : options.timeout;
  std::vector<std::string> argv{simulator.string(),
                                "--config",
                                fs::absolute(options.config).string(),
                                "--nodes",
                                fs::absolute(options.nodes).string(),
                                "--pods",
                                fs::absolute(options.pods).string(),
                                "--timeout",
                                std::to_string(go_timeout.count()) + "s"};
  if (std::find(options.explain.begin(), options.explain.end(), "*") !=
      options.explain.end()) {
    argv.insert(argv.end(), {"--explain", "*"});
  } else {
    for (const KubePod* p : explain)
      argv.insert(argv.end(), {"--explain", p->key()});
  }
  // The shim talks plaintext to this host on its socket, whatever the
  // caller's environment says about TLS for another one.
  const ProgramRun run = run_program(
      argv, {"SCHEDPLUG_HOST=" + host_options.listen,
             "SCHEDPLUG_TLS_CA=", "SCHEDPLUG_TLS_CERT=", "SCHEDPLUG_TLS_KEY="});
  NativeRaw native;
  native.read(*host,
              std::vector<const KubePod*>(explain.begin(), explain.end()));
  host->shutdown(std::chrono::milliseconds(500));
  err << run.err;
  if (run.status < 0) {
    err << "error: cannot run " << simulator.string() << ": " << run.start_error
        << "\n";
    return kSimulateBadInput;
  }
  if (run.status == kSimulateBadInput) return kSimulateBadInput;
  if (run.status != 0) {
    err << "error: " << simulator.string() << " failed (exit status "
        << run.status << "); see its message above\n";
    return kSimulateSomeNotPlaced;
  }
  try {
    read_result(Json::parse(run.out), pending, native, report, err);
  } catch (const std::exception& e) {
    err << "error: cannot read what " << simulator.string()
        << " printed: " << e.what() << "\n";
    return kSimulateSomeNotPlaced;
  }
  return 0;
}

}  // namespace schedplug::tools
