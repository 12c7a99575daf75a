// Hot reload: the host re-reads its configuration file and plugin
// directory, checks every change exactly as at start-up (file checks, ABI,
// names, profile, args, create) and swaps a new plugin set in between
// calls (plugin_generation.hpp), or keeps what it has and says why.
//
// What a reload may change: plugin files (a new build of an enabled plugin,
// a new plugin no profile enables yet) and the plugins' args. What it may
// not: anything kube-scheduler registered when it started (the profiles'
// native plugins, their weights and failure policies, and each plugin's
// extension points, events, declared data, hints and pod keys). A change
// to those is refused with a message saying a scheduler restart is needed.
//
// Changes are taken together when they pass together; otherwise one by
// one (the configuration first, then each changed plugin file), so a bad
// file never holds back a good one. A file that fails keeps its plugin's
// loaded version; a removed file of an enabled plugin keeps its loaded
// version too, with a warning. Every refusal is logged with the file and
// the reason and counted in schedplug_reloads_refused_total, once per
// distinct file content.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host/config/scheduler_config.hpp"
#include "host/reload/plugin_generation.hpp"
#include "host/reload/reload_status.hpp"

namespace schedplug::host {

class HostMetrics;

// What one reload did.
struct ReloadOutcome {
  bool swapped = false;     // a new plugin set serves from now on
  uint64_t generation = 0;  // the serving set's
  // One line per plugin or configuration change taken.
  std::vector<std::string> taken;
  // Each change refused: the file, the reason and a sentence (what to do).
  std::vector<ReloadRefusal> refused;
  std::vector<std::string> warnings;
};

// Where the reloader reads the serving plugin set and swaps the next one
// in (the call pipeline's), and reports what each reload did.
struct ServingPlugins {
  std::function<std::shared_ptr<const PluginGeneration>()> current;
  std::function<void(std::shared_ptr<const PluginGeneration>)> swap;
  ReloadStatus* status = nullptr;
};

class PluginReloader {
 public:
  // `config`: what the serving set was resolved from (`config_file` as
  // read at start-up). `metrics` may be null.
  // `pins_file`: the --plugin-sha256 list, read again at each reload (a
  // bundle ships it beside the plugins); empty: none.
  PluginReloader(ServingPlugins serving, HostMetrics* metrics,
                 std::filesystem::path config_file,
                 std::filesystem::path plugin_dir, SchedulerConfig config,
                 std::filesystem::path pins_file = {});

  // Reads the configuration and the plugin directory once and swaps in
  // what passes. Safe to call from any thread; reloads run one at a time.
  // The ReloadStatus follows each one.
  ReloadOutcome reload();

 private:
  ReloadOutcome reload_locked();
  struct Candidate;
  struct Attempt;
  Attempt attempt(const Candidate& candidate, const PluginGeneration& current,
                  const PluginGeneration& previous) const;
  // A shadow candidate's file changed (a new build of it to load).
  bool shadows_changed(const PluginGeneration& current) const;
  // Logs and counts a refusal unless this very one was refused before.
  void refuse(ReloadOutcome& outcome, const std::string& key,
              const std::string& file, std::string_view reason,
              const std::string& message);

  ServingPlugins serving_;
  HostMetrics* metrics_;
  const std::filesystem::path config_file_;
  const std::filesystem::path plugin_dir_;
  const std::filesystem::path pins_file_;
  std::mutex mutex_;        // one reload at a time; guards what follows
  SchedulerConfig config_;  // the serving set's configuration
  std::map<std::string, bool> refused_;  // refusals already reported
};

// Why `next` cannot replace `current` without a scheduler restart: one
// sentence per difference in what kube-scheduler registered at start
// (empty: it can).
std::vector<std::string> restart_needed(const PluginGeneration& current,
                                        const PluginGeneration& next);

}  // namespace schedplug::host
