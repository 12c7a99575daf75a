#include "host/identity/handshake_check.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace schedplug::host {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return s;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// `did you mean "HwEncrypt" (plugins/hw.so)? names are case-sensitive`
// when a loaded plugin's name differs only in case.
std::string suggestion(
    const std::string& name,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries) {
  for (const auto& lib : libraries) {
    if (lib->name() != name && lower(lib->name()) == lower(name)) {
      return "; did you mean " + quoted(lib->name()) + " (" +
             lib->file().string() + ")? names are case-sensitive";
    }
  }
  return {};
}

}  // namespace

HandshakeFindings check_handshake(
    const v1::HandshakeRequest& request, const CreatedPlugins& created,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries,
    const std::filesystem::path& config_file) {
  HandshakeFindings out;
  const std::string file = config_file.empty()
                               ? std::string("the host's config")
                               : config_file.string();
  std::set<std::string> seen_profiles;
  for (const v1::ProfilePlugins& shim_profile : request.profiles()) {
    const std::string& name = shim_profile.scheduler_name();
    const std::string where = file + ": profile " + quoted(name);
    if (!seen_profiles.insert(name).second) {
      out.errors.push_back(where + ": the shim lists this profile twice");
      continue;
    }
    const ProfilePlugins* host_profile = created.profile(name);
    if (host_profile == nullptr) {
      out.errors.push_back(
          where +
          ": the scheduler runs this profile but the host's "
          "KubeSchedulerConfiguration has no profile with that schedulerName; "
          "give kube-scheduler and schedplug-host the same --config file");
      continue;
    }
    std::set<std::string> shim_names;
    for (const std::string& plugin : shim_profile.plugins()) {
      shim_names.insert(plugin);
      if (host_profile->plugin_named(plugin) != nullptr) continue;
      const bool loaded =
          std::any_of(libraries.begin(), libraries.end(),
                      [&](const auto& lib) { return lib->name() == plugin; });
      if (loaded) {
        out.errors.push_back(
            where + ": plugin " + quoted(plugin) +
            " is registered by the scheduler and loaded by the host, but the "
            "host's copy of the profile does not enable it; give "
            "kube-scheduler and schedplug-host the same --config file");
      } else {
        out.errors.push_back(where + ": plugin " + quoted(plugin) +
                             " is not an in-tree plugin and no loaded .so "
                             "reports it" +
                             suggestion(plugin, libraries) +
                             "; put its .so in the host's --plugins directory");
      }
    }
    for (const PluginInstance* plugin : host_profile->plugins) {
      if (!shim_names.contains(plugin->name())) {
        out.warnings.push_back(
            where + ": the host runs plugin " + quoted(plugin->name()) +
            " but the scheduler did not register it; its verdicts and scores "
            "will be ignored");
      }
    }
  }
  for (const ProfilePlugins& host_profile : created.profiles()) {
    if (!seen_profiles.contains(host_profile.scheduler_name)) {
      out.warnings.push_back(file + ": profile " +
                             quoted(host_profile.scheduler_name) +
                             " is in the host's config but the scheduler did "
                             "not list it");
    }
  }
  return out;
}

}  // namespace schedplug::host
