#include "host/identity/config_skew.hpp"

#include <cctype>
#include <map>
#include <set>

namespace schedplug::host {
namespace {

constexpr const char* kScheduler = " in kube-scheduler and ";

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// A value as the message shows it: JSON, cut after 80 characters.
std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// `args.key`, or `args["a key"]` for a key that is not a plain word.
std::string member(const std::string& path, const std::string& key) {
  bool plain =
      !key.empty() && std::isdigit(static_cast<unsigned char>(key[0])) == 0;
  for (const char c : key) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                      c == '_' || c == '-');
  }
  if (plain) return path + "." + key;
  return path + "[" + nlohmann::json(key).dump() + "]";
}

void differences(const nlohmann::json& a, const nlohmann::json& b,
                 const std::string& path, size_t limit,
                 std::vector<std::string>& out) {
  if (out.size() >= limit) return;
  if (a.is_number() && b.is_number()) {
    if (a.get<double>() != b.get<double>()) {
      out.push_back(path + " is " + shown(a) + kScheduler + shown(b) +
                    " in the host's config");
    }
    return;
  }
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (out.size() >= limit) return;
      const auto it = b.find(key);
      if (it == b.end()) {
        out.push_back(member(path, key) + " is " + shown(value) + kScheduler +
                      "not set in the host's config");
      } else {
        differences(value, *it, member(path, key), limit, out);
      }
    }
    for (const auto& [key, value] : b.items()) {
      if (out.size() >= limit) return;
      if (!a.contains(key)) {
        out.push_back(member(path, key) + " is not set" + kScheduler +
                      shown(value) + " in the host's config");
      }
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      out.push_back(path + " has " + std::to_string(a.size()) + " item" +
                    (a.size() == 1 ? "" : "s") + kScheduler +
                    std::to_string(b.size()) + " in the host's config");
      return;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      differences(a[i], b[i], path + "[" + std::to_string(i) + "]", limit, out);
    }
    return;
  }
  if (a != b) {
    out.push_back(path + " is " + shown(a) + kScheduler + shown(b) +
                  " in the host's config");
  }
}

std::string timeout_text(int64_t ms) {
  return ms == 0 ? std::string("not set") : quoted(std::to_string(ms) + "ms");
}

}  // namespace

std::vector<std::string> json_differences(const nlohmann::json& scheduler,
                                          const nlohmann::json& host,
                                          const std::string& path,
                                          size_t limit) {
  std::vector<std::string> out;
  differences(scheduler, host, path, limit, out);
  return out;
}

SkewFindings check_config_skew(const v1::HandshakeRequest& request,
                               const std::vector<ResolvedProfile>& profiles,
                               const std::filesystem::path& config_file) {
  SkewFindings out;
  const std::string file = config_file.empty()
                               ? std::string("the host's config")
                               : config_file.string();
  const std::string remedy =
      " (" + file +
      "); the config file changed while one of them kept running: restart "
      "kube-scheduler (or the schedplug-host sidecar, whichever read the "
      "old file) or roll back the ConfigMap";
  for (const v1::ProfilePlugins& shim_profile : request.profiles()) {
    const std::string& name = shim_profile.scheduler_name();
    if (shim_profile.settings().empty()) {
      // A profile without native plugins has nothing to send; one with
      // plugins but no settings comes from a shim older than the check.
      if (!shim_profile.plugins().empty()) {
        out.unchecked_profiles.push_back(name);
      }
      continue;
    }
    const ResolvedProfile* host_profile = nullptr;
    for (const ResolvedProfile& p : profiles) {
      if (p.scheduler_name == name) host_profile = &p;
    }
    // A profile the host lacks is the name check's finding.
    if (host_profile == nullptr) continue;
    std::map<std::string, const ResolvedPlugin*> host_plugins;
    for (const ResolvedPlugin& p : host_profile->plugins) {
      host_plugins[p.library->name()] = &p;
    }
    std::set<std::string> sent;
    for (const v1::PluginSettings& s : shim_profile.settings()) {
      const std::string where =
          "profile " + quoted(name) + ", plugin " + quoted(s.name()) + ": ";
      if (!sent.insert(s.name()).second) continue;
      const auto it = host_plugins.find(s.name());
      if (it == host_plugins.end()) {
        out.errors.push_back(where +
                             "enabled in kube-scheduler's config but not in "
                             "the host's config" +
                             remedy);
        continue;
      }
      const ResolvedPlugin& host = *it->second;
      std::vector<std::string> diffs;
      const std::string policy =
          s.failure_policy().empty() ? "Fail" : s.failure_policy();
      if (policy != host.settings.failure_policy) {
        diffs.push_back("args.schedplug.failurePolicy is " + quoted(policy) +
                        kScheduler + quoted(host.settings.failure_policy) +
                        " in the host's config");
      }
      if (s.timeout_ms() != host.settings.timeout_ms) {
        diffs.push_back("args.schedplug.timeout is " +
                        timeout_text(s.timeout_ms()) + kScheduler +
                        timeout_text(host.settings.timeout_ms) +
                        " in the host's config");
      }
      if (host.library->has_score() && s.weight() != host.config_weight) {
        auto weight_text = [](int w) {
          return w == 0 ? std::string(
                              "none (not enabled at score or "
                              "multiPoint)")
                        : std::to_string(w);
        };
        diffs.push_back("the score weight is " + weight_text(s.weight()) +
                        kScheduler + weight_text(host.config_weight) +
                        " in the host's config");
      }
      nlohmann::json scheduler_args = nlohmann::json::object();
      if (!s.args_json().empty()) {
        try {
          scheduler_args = nlohmann::json::parse(s.args_json());
        } catch (const nlohmann::json::exception& e) {
          out.errors.push_back(
              where + "the args the scheduler sent are not JSON (" + e.what() +
              "); use a shim and host from the same "
              "schedplug release");
          continue;
        }
      }
      if (scheduler_args.is_null()) scheduler_args = nlohmann::json::object();
      // Compared above as parsed settings (and a pin, schedplug.sha256,
      // concerns only the host's file: not compared).
      if (scheduler_args.is_object()) scheduler_args.erase("schedplug");
      const nlohmann::json host_args = nlohmann::json::parse(host.args_json);
      for (std::string& d :
           json_differences(scheduler_args, host_args, "args")) {
        diffs.push_back(std::move(d));
      }
      for (const std::string& d : diffs) {
        out.errors.push_back(where + d + remedy);
      }
    }
    for (const ResolvedPlugin& p : host_profile->plugins) {
      if (!sent.contains(p.library->name())) {
        out.errors.push_back("profile " + quoted(name) + ", plugin " +
                             quoted(p.library->name()) +
                             ": enabled in the host's config but not in "
                             "kube-scheduler's" +
                             remedy);
      }
    }
  }
  return out;
}

}  // namespace schedplug::host
