// Reading a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1).
//
// Both kube-scheduler and schedplug-host read the same file; the host only
// needs the profiles: which plugins each enables at which extension point,
// in which order, and their pluginConfig args.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedplug::host {

// kube-scheduler's extension points, as named in the YAML (`multiPoint`,
// `preFilter`, ...).
enum class ExtensionPoint {
  kMultiPoint,
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  // Added in kube-scheduler v1.36/v1.37 (pod group scheduling); appended so
  // the values above keep their meaning.
  kPlacementGenerate,
  kPlacementScore,
  kPodGroupPostFilter,
};

// The YAML spelling, e.g. "preFilter".
const char* to_string(ExtensionPoint point);
// Every extension point, in the order kube-scheduler's Plugins struct lists
// them (multiPoint first).
const std::vector<ExtensionPoint>& all_extension_points();

struct PluginRef {
  std::string name;
  std::optional<int> weight;  // score only
  int line = 0;               // 1-based line in the file, 0 if unknown
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;  // may contain "*"
};

struct PluginConfigEntry {
  std::string name;
  std::string args_json;  // the `args` mapping converted to JSON; "{}" if none
  int line = 0;
};

struct Profile {
  std::string scheduler_name;  // defaults to "default-scheduler"
  std::map<ExtensionPoint, PluginSet> plugins;
  std::vector<PluginConfigEntry> plugin_config;
  int line = 0;
};

struct SchedulerConfig {
  std::filesystem::path file;  // where it was read from ("" for strings)
  std::vector<Profile> profiles;
};

// Problems in the file itself (not YAML, wrong apiVersion/kind, a field of
// the wrong type, a bad weight, a bad args.schedplug setting). Each problem
// is a sentence with the file and line; what() is all of them, one a line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message);
  explicit ConfigError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// Throw a ConfigError listing every problem found.
SchedulerConfig load_scheduler_config(const std::filesystem::path& file);
SchedulerConfig parse_scheduler_config(const std::string& yaml,
                                       const std::filesystem::path& file = {});

// The same, but every problem the parser can step over is appended to
// `problems` and parsing goes on without the offending part (an unknown
// field is ignored, a bad weight is dropped, a malformed entry is left
// out), so one run reports them all. Throws ConfigError only when the file
// cannot be read as a KubeSchedulerConfiguration at all (unreadable, not
// YAML, not a mapping).
SchedulerConfig load_scheduler_config(const std::filesystem::path& file,
                                      std::vector<std::string>& problems);
SchedulerConfig parse_scheduler_config(const std::string& yaml,
                                       const std::filesystem::path& file,
                                       std::vector<std::string>& problems);

}  // namespace schedplug::host
