// PluginReloader (plugin_reload.hpp): one reload attempt, from the files read
// to the swap or the refusal. One file: restart_needed()'s list of what
// kube-scheduler registered and the attempt's checks compare the same current
// and candidate generations.
#include "host/reload/plugin_reload.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "host/check/name_check.hpp"
#include "host/config/resolve.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/shadow/candidates.hpp"

namespace schedplug::host {
namespace {

std::string read_bytes(const std::filesystem::path& file, bool& ok) {
  std::ifstream in(file, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream bytes;
  if (ok) bytes << in.rdbuf();
  return bytes.str();
}

// Names the content of `file` as it is now (its inode, size and change
// time), so that a refusal is reported once per version of a file.
std::string file_version(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "gone";
  return fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_ctim.tv_sec,
                     st.st_ctim.tv_nsec);
}

std::string hex(uint64_t bits) { return fmt::format("{:#x}", bits); }

bool subset(uint64_t bits, uint64_t of) { return (bits & ~of) == 0; }

bool keys_subset(const google::protobuf::RepeatedPtrField<std::string>& keys,
                 const google::protobuf::RepeatedPtrField<std::string>& of) {
  return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) {
    return std::find(of.begin(), of.end(), k) != of.end();
  });
}

std::string names(const std::vector<const PluginInstance*>& plugins) {
  std::string out;
  for (const PluginInstance* p : plugins) {
    out += (out.empty() ? "" : ", ") + p->name();
  }
  return out.empty() ? "none" : out;
}

// The v1.6 hooks a plugin has, as kube-scheduler's extension points:
// "Reserve, PreBind", or "none".
std::string hook_names(const v1::PluginInfo& info) {
  std::string out;
  const auto add = [&out](bool has, const char* name) {
    if (has) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  add(info.has_reserve(), "Reserve");
  add(info.has_permit(), "Permit");
  add(info.has_pre_bind(), "PreBind");
  add(info.has_pre_enqueue(), "PreEnqueue");
  return out.empty() ? "none of Reserve, Permit, PreBind, PreEnqueue" : out;
}

const std::shared_ptr<PluginLibrary>* library_named(
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries,
    const std::string& name) {
  for (const auto& lib : libraries) {
    if (lib->name() == name) return &lib;
  }
  return nullptr;
}

void sort_by_file(std::vector<std::shared_ptr<PluginLibrary>>& libraries) {
  std::sort(libraries.begin(), libraries.end(),
            [](const auto& a, const auto& b) { return a->file() < b->file(); });
}

// "HwEncrypt 1.1.0 (hw.so, sha256 0123456789ab)"
std::string describe(const PluginLibrary& lib) {
  return fmt::format("{} {} ({}, sha256 {})", lib.name(), lib.version(),
                     lib.file().filename().string(),
                     lib.sha256().substr(0, 12));
}

}  // namespace

std::vector<std::string> restart_needed(const PluginGeneration& current,
                                        const PluginGeneration& next) {
  std::vector<std::string> out;
  const auto restart = [&](std::string what) {
    out.push_back(what +
                  "; kube-scheduler registered what the running version "
                  "declared when it started, so this change takes a "
                  "restart of the scheduler (kube-scheduler and the host)");
  };
  for (const ProfilePlugins& cur : current.created->profiles()) {
    const ProfilePlugins* nxt = next.created->profile(cur.scheduler_name);
    if (nxt == nullptr) {
      restart(fmt::format("profile \"{}\" is gone from the configuration",
                          cur.scheduler_name));
      continue;
    }
    if (names(cur.filters) != names(nxt->filters)) {
      restart(fmt::format(
          "profile \"{}\": the native Filter plugins would be {} instead of {}",
          cur.scheduler_name, names(nxt->filters), names(cur.filters)));
    }
    if (names(cur.scorers) != names(nxt->scorers)) {
      restart(fmt::format(
          "profile \"{}\": the native Score plugins would be {} instead of {}",
          cur.scheduler_name, names(nxt->scorers), names(cur.scorers)));
    }
  }
  for (const ResolvedProfile& cur : current.resolved) {
    for (const ResolvedProfile& nxt : next.resolved) {
      if (nxt.scheduler_name != cur.scheduler_name) continue;
      for (const ResolvedPlugin& a : cur.plugins) {
        for (const ResolvedPlugin& b : nxt.plugins) {
          if (a.library->name() != b.library->name()) continue;
          if (a.config_weight != b.config_weight) {
            restart(fmt::format(
                "profile \"{}\", plugin {}: the score weight would be {} "
                "instead of {}",
                cur.scheduler_name, a.library->name(), b.config_weight,
                a.config_weight));
          }
          if (a.settings.failure_policy != b.settings.failure_policy) {
            restart(fmt::format(
                "profile \"{}\", plugin {}: the failure policy would be {} "
                "instead of {}",
                cur.scheduler_name, a.library->name(),
                b.settings.failure_policy, a.settings.failure_policy));
          }
        }
      }
    }
  }
  for (const ResolvedProfile& nxt : next.resolved) {
    if (current.created->profile(nxt.scheduler_name) == nullptr) {
      restart(fmt::format("profile \"{}\" is new in the configuration",
                          nxt.scheduler_name));
    }
  }
  const std::vector<std::string> enabled = enabled_plugin_names(current);
  const std::vector<v1::PluginInfo> before = plugin_infos(current);
  const std::vector<v1::PluginInfo> after = plugin_infos(next);
  for (const v1::PluginInfo& a : before) {
    if (std::find(enabled.begin(), enabled.end(), a.name()) == enabled.end())
      continue;
    const auto b = std::find_if(after.begin(), after.end(), [&](const auto& i) {
      return i.name() == a.name();
    });
    if (b == after.end()) continue;  // the profile check above says it
    const std::string plugin =
        fmt::format("plugin {} {} ({})", b->name(), b->version(),
                    std::filesystem::path(b->file()).filename().string());
    if (a.has_filter() != b->has_filter() || a.has_score() != b->has_score()) {
      restart(fmt::format(
          "{} has {} where the running version {} has {}", plugin,
          b->has_filter()
              ? (b->has_score() ? "Filter and Score" : "Filter")
              : (b->has_score() ? "Score" : "neither Filter nor Score"),
          a.version(),
          a.has_filter() ? (a.has_score() ? "Filter and Score" : "Filter")
                         : (a.has_score() ? "Score" : "neither")));
    }
    if (hook_names(a) != hook_names(*b)) {
      restart(fmt::format(
          "{} implements {} where the running version {} implements {}", plugin,
          hook_names(*b), a.version(), hook_names(a)));
    }
    // 0 is every event; fewer events than registered only requeue less.
    if (a.events() != 0 &&
        (b->events() == 0 || !subset(b->events(), a.events()))) {
      restart(
          fmt::format("{} declares events {} where the running version "
                      "declared {}",
                      plugin, b->events() == 0 ? "all" : hex(b->events()),
                      hex(a.events())));
    }
    if (!subset(b->data(), a.data())) {
      restart(
          fmt::format("{} reads pod or node data {} where the running "
                      "version declared {} (the shim sends only that)",
                      plugin, hex(b->data()), hex(a.data())));
    }
    // Dropping a promise would make the shim reuse what it may not.
    if (!subset(a.hints(), b->hints())) {
      restart(
          fmt::format("{} promises hints {} where the running version "
                      "promised {} (the shim relies on those)",
                      plugin, hex(b->hints()), hex(a.hints())));
    }
    if (!keys_subset(b->pod_label_keys(), a.pod_label_keys()) ||
        !keys_subset(b->pod_annotation_keys(), a.pod_annotation_keys())) {
      restart(
          fmt::format("{} reads pod label or annotation keys the running "
                      "version did not declare (the shim signs pods by "
                      "those)",
                      plugin));
    }
  }
  return out;
}

// A configuration and plugin files to try.
struct PluginReloader::Candidate {
  const SchedulerConfig* config;
  std::string config_bytes;
  std::vector<std::shared_ptr<PluginLibrary>> libraries;
};

struct PluginReloader::Attempt {
  std::shared_ptr<PluginGeneration> set;  // null: refused
  std::string reason;                     // config, create, restart_needed
  std::string message;
};

PluginReloader::PluginReloader(ServingPlugins serving, HostMetrics* metrics,
                               std::filesystem::path config_file,
                               std::filesystem::path plugin_dir,
                               SchedulerConfig config,
                               std::filesystem::path pins_file)
    : serving_(std::move(serving)),
      metrics_(metrics),
      config_file_(std::move(config_file)),
      plugin_dir_(std::move(plugin_dir)),
      pins_file_(std::move(pins_file)),
      config_(std::move(config)) {}

bool PluginReloader::shadows_changed(const PluginGeneration& current) const {
  const std::vector<std::shared_ptr<PluginLibrary>> before =
      shadow_libraries(current.resolved);
  if (before.empty()) return false;
  std::vector<ResolvedProfile> probe = current.resolved;
  std::vector<std::string> problems;
  load_shadow_candidates(probe, plugin_dir_, before, problems);
  return !problems.empty() || shadow_libraries(probe) != before;
}

PluginReloader::Attempt PluginReloader::attempt(
    const Candidate& candidate, const PluginGeneration& current,
    const PluginGeneration& previous) const {
  Attempt out;
  // Files were opened under the pins of the configuration read this time;
  // the candidate's configuration (maybe the one serving) must allow them.
  std::vector<std::string> pin_problems;
  const auto pins = config_plugin_pins(*candidate.config, pin_problems);
  for (const auto& lib : candidate.libraries) {
    if (std::string problem =
            check_served_pins(lib->file(), lib->name(), lib->sha256(), pins,
                              candidate.config->file);
        !problem.empty()) {
      out.message += (out.message.empty() ? "" : "; ") + lib->file().string() +
                     ": refused: " + problem;
    }
  }
  if (!out.message.empty()) {
    out.reason = "load";
    return out;
  }
  const std::vector<Diagnostic> findings =
      check_names(*candidate.config, candidate.libraries);
  std::vector<std::string> problems;
  for (const Diagnostic& d : findings) {
    if (d.severity == Severity::kError) problems.push_back(d.message);
  }
  std::vector<std::string> warnings;
  for (const Diagnostic& d : findings) {
    if (d.severity != Severity::kError) warnings.push_back(d.message);
  }
  std::vector<ResolvedProfile> resolved =
      resolve_profiles(*candidate.config, candidate.libraries, problems);
  load_shadow_candidates(resolved, plugin_dir_,
                         shadow_libraries(current.resolved), problems);
  if (!problems.empty()) {
    out.reason = "config";
    for (const std::string& p : problems) {
      out.message += (out.message.empty() ? "" : "; ") + p;
    }
    return out;
  }
  std::shared_ptr<PluginGeneration> set;
  try {
    set = make_generation({.config_bytes = candidate.config_bytes,
                           .libraries = candidate.libraries,
                           .resolved = std::move(resolved),
                           .warnings = std::move(warnings),
                           .checked = nullptr},
                          &previous);
  } catch (const CreateError& e) {
    out.reason = "create";
    out.message = e.what();
    return out;
  }
  const std::vector<std::string> restart = restart_needed(current, *set);
  if (!restart.empty()) {
    out.reason = "restart_needed";
    for (const std::string& r : restart) {
      out.message += (out.message.empty() ? "" : "; ") + r;
    }
    return out;
  }
  set->generation = current.generation + 1;
  out.set = std::move(set);
  return out;
}

void PluginReloader::refuse(ReloadOutcome& outcome, const std::string& key,
                            const std::string& file, std::string_view reason,
                            const std::string& message) {
  outcome.refused.push_back(
      {.file = file, .reason = std::string(reason), .message = message});
  if (!refused_.emplace(key, true).second) return;  // reported already
  if (refused_.size() > 4096) refused_.clear();
  spdlog::warn("reload: {}", message);
  if (metrics_) metrics_->reload_refused(file, reason);
}

ReloadOutcome PluginReloader::reload() {
  std::lock_guard lock(mutex_);
  ReloadOutcome outcome = reload_locked();
  serving_.status->reloaded(outcome.swapped, outcome.refused);
  return outcome;
}

ReloadOutcome PluginReloader::reload_locked() {
  ReloadOutcome outcome;
  const std::shared_ptr<const PluginGeneration> current = serving_.current();
  outcome.generation = current->generation;
  const std::string config_name = config_file_.filename().string();

  // The configuration: a new one that does not parse keeps the old.
  bool readable = false;
  std::string bytes = read_bytes(config_file_, readable);
  SchedulerConfig parsed;
  const SchedulerConfig* config = &config_;
  const bool config_changed = readable && bytes != current->config_bytes;
  if (!readable) {
    refuse(outcome, "config:unreadable:" + file_version(config_file_),
           config_name, "config",
           fmt::format("{}: cannot read the configuration file; the host "
                       "keeps running with the configuration it has",
                       config_file_.string()));
    bytes = current->config_bytes;
  } else if (config_changed) {
    std::vector<std::string> problems;
    try {
      parsed = parse_scheduler_config(bytes, config_file_, problems);
    } catch (const ConfigError& e) {
      problems = e.problems();
      if (problems.empty()) problems.push_back(e.what());
    }
    if (problems.empty()) {
      (void)config_plugin_pins(parsed, problems);
    }
    if (!problems.empty()) {
      std::string all;
      for (const std::string& p : problems) all += "\n  " + p;
      refuse(outcome, "config:" + bytes_sha256(bytes), config_name, "config",
             fmt::format("{}: the changed configuration is not used, the host "
                         "keeps the one it has; fix it (`schedplug check` "
                         "reports the same):{}",
                         config_file_.string(), all));
      bytes = current->config_bytes;
    } else {
      config = &parsed;
    }
  }

  // The plugin files, checked against the pins of the configuration used.
  std::vector<std::string> pin_problems;
  PluginFilePolicy& policy = plugin_file_policy();
  const auto pins_before = policy.name_pins;
  const auto list_before = policy.pins;
  policy.name_pins = config_plugin_pins(*config, pin_problems);
  if (!pins_file_.empty()) {
    try {
      policy.pins = read_plugin_pins(pins_file_);
    } catch (const std::exception& e) {
      policy.name_pins = pins_before;
      refuse(outcome, "pins:" + file_version(pins_file_),
             pins_file_.filename().string(), "load",
             std::string(e.what()) +
                 " (--plugin-sha256); the host keeps the plugins it has");
      return outcome;
    }
  }
  const auto restore_pins = [&] {
    policy.name_pins = pins_before;
    policy.pins = list_before;
  };
  LoadResult loaded;
  try {
    loaded = load_plugin_directory(plugin_dir_, current->libraries);
  } catch (const LoadError& e) {
    restore_pins();
    refuse(outcome, "dir:" + file_version(plugin_dir_),
           plugin_dir_.filename().string(), "load",
           std::string(e.what()) + "; the host keeps the plugins it has");
    return outcome;
  }
  std::vector<std::shared_ptr<PluginLibrary>> libraries = loaded.plugins;
  // A file that failed keeps its plugin's loaded version.
  for (const LoadProblem& problem : loaded.problems) {
    std::string kept;
    for (const auto& lib : current->libraries) {
      if (lib->file() == problem.file &&
          library_named(libraries, lib->name()) == nullptr) {
        libraries.push_back(lib);
        kept = "; plugin " + lib->name() + " keeps running version " +
               lib->version();
      }
    }
    refuse(outcome,
           "load:" + problem.file.string() + ":" + file_version(problem.file) +
               ":" + problem.message,
           problem.file.filename().string(), "load",
           problem.message + " (not loaded" + kept + ")");
  }
  // A removed file of an enabled plugin keeps its loaded version.
  for (const std::string& name : enabled_plugin_names(*current)) {
    if (library_named(libraries, name) != nullptr) continue;
    const auto* kept = library_named(current->libraries, name);
    if (kept == nullptr) continue;
    libraries.push_back(*kept);
    const std::string warning = fmt::format(
        "reload: {} is gone from {}, but profiles enable plugin {}: the host "
        "keeps running version {} it loaded; put the file back, or remove "
        "the plugin from the profiles and restart the scheduler",
        (*kept)->file().filename().string(), plugin_dir_.string(), name,
        (*kept)->version());
    outcome.warnings.push_back(warning);
    if (refused_.emplace("gone:" + (*kept)->sha256(), true).second)
      spdlog::warn("{}", warning);
  }
  sort_by_file(libraries);

  if (libraries == current->libraries && config == &config_ &&
      !shadows_changed(*current)) {
    restore_pins();
    return outcome;  // nothing new, or the only change was refused
  }

  // Everything at once, else one change at a time.
  std::shared_ptr<PluginGeneration> next;
  const Candidate all{config, bytes, libraries};
  Attempt together = attempt(all, *current, *current);
  if (together.set != nullptr) {
    next = std::move(together.set);
    if (config != &config_)
      outcome.taken.push_back("configuration " + config_name);
    for (const auto& lib : next->libraries) {
      if (std::find(current->libraries.begin(), current->libraries.end(),
                    lib) == current->libraries.end())
        outcome.taken.push_back(describe(*lib));
    }
  } else {
    Candidate accepted{&config_, current->config_bytes, current->libraries};
    const PluginGeneration* previous = current.get();
    std::shared_ptr<PluginGeneration> last;
    const auto try_one = [&](Candidate candidate, const std::string& key,
                             const std::string& file, const std::string& what) {
      Attempt a = attempt(candidate, *current, *previous);
      if (a.set == nullptr) {
        refuse(outcome, a.reason + ":" + key, file, a.reason,
               fmt::format("{} is not used, the host keeps what it has: {}",
                           what, a.message));
        return;
      }
      accepted = std::move(candidate);
      last = std::move(a.set);
      previous = last.get();
      outcome.taken.push_back(what);
    };
    if (config != &config_) {
      try_one({config, bytes, current->libraries},
              "config:" + bytes_sha256(bytes), config_name,
              "configuration " + config_file_.string());
    }
    for (const auto& lib : libraries) {
      if (std::find(current->libraries.begin(), current->libraries.end(),
                    lib) != current->libraries.end())
        continue;
      Candidate one = accepted;
      std::erase_if(one.libraries, [&](const auto& l) {
        return l->name() == lib->name() || l->file() == lib->file();
      });
      one.libraries.push_back(lib);
      sort_by_file(one.libraries);
      try_one(std::move(one), lib->file().string() + ":" + lib->sha256(),
              lib->file().filename().string(), describe(*lib));
    }
    if (last == nullptr) {
      // Why the changes failed together, unless one of them said it (or
      // nothing was tried alone: only a shadow candidate changed).
      const bool said = std::any_of(
          outcome.refused.begin(), outcome.refused.end(),
          [&](const ReloadRefusal& r) { return r.reason == together.reason; });
      if (!said) {
        refuse(outcome, together.reason + ":" + together.message, config_name,
               together.reason,
               "the change is not used, the host keeps what it has: " +
                   together.message);
      }
      restore_pins();
      return outcome;
    }
    config = accepted.config;
    next = std::move(last);
    next->generation = current->generation + 1;
  }

  policy.name_pins = config_plugin_pins(*config, pin_problems);
  if (config != &config_) config_ = *config;
  start_refresh(*next, current.get(), metrics_);
  if (metrics_) metrics_->plugins_loaded(*next);
  outcome.swapped = true;
  outcome.generation = next->generation;
  std::string taken;
  for (const std::string& t : outcome.taken)
    taken += (taken.empty() ? "" : ", ") + t;
  // The candidates run from now on, changed or not: a shadow is read
  // off this line rather than only once it disagrees.
  std::string shadows;
  for (const ShadowBuild& b : shadow_builds(next->resolved))
    shadows += (shadows.empty() ? "" : ", ") + describe(b);
  spdlog::info(
      "reload: plugin set {} serves from now on: {}; {}", next->generation,
      taken.empty() ? std::string("the same plugins and configuration") : taken,
      shadows.empty() ? std::string("no shadow candidates")
                      : "shadow candidates: " + shadows);
  serving_.swap(std::move(next));
  return outcome;
}

}  // namespace schedplug::host
