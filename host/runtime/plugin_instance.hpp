// One created instance of a plugin (one per profile that enables it), and
// the safe way to call its hooks.
//
// Every call goes through here so that the host-side rules hold in one
// place: reasons are copied out of host-owned buffers, an exception that
// escapes a hook becomes an Error naming the plugin, scores are normalized
// and range-checked.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "host/loader/plugin_library.hpp"
#include "schedplug/plugin.h"

namespace schedplug::host {

struct Verdict {
  schedplug_code code = SCHEDPLUG_SUCCESS;
  std::string reason;
  bool ok() const { return code == SCHEDPLUG_SUCCESS; }
};

struct ScoreResult {
  schedplug_code code = SCHEDPLUG_SUCCESS;
  int64_t score = 0;
  std::string reason;  // set when code is ERROR
};

// create() failed. what() names the plugin, its file and the plugin's own
// message (e.g. "HwEncrypt (/plugins/hw.so) rejected its args: ...").
class CreateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PluginInstance {
 public:
  // Calls the plugin's create() with `args_json` (the plugin's
  // pluginConfig args, already stripped of the host's own `schedplug` key).
  static std::unique_ptr<PluginInstance> create(
      std::shared_ptr<const PluginLibrary> library,
      const std::string& args_json);
  ~PluginInstance();  // calls destroy()
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  const PluginLibrary& library() const { return *library_; }
  const std::string& name() const { return library_->name(); }

  // The hooks below are safe to call concurrently (plugin.h's contract).

  // applies() hook; true when absent.
  bool applies(const schedplug_pod& pod) const;
  // filter(); SUCCESS when the plugin has no filter.
  Verdict filter(const schedplug_pod& pod, const schedplug_node& node) const;
  // score(); raw value.
  ScoreResult score(const schedplug_pod& pod, const schedplug_node& node) const;
  // Normalizes raw scores in place into [0, 100] with the plugin's own
  // normalize_score or its declared policy. Returns a Verdict whose reason
  // names the plugin (and the node, for an out-of-range value) on failure.
  Verdict normalize(const schedplug_pod& pod,
                    std::span<schedplug_node_score> scores) const;
  // refresh(); SUCCESS when the plugin has none.
  Verdict refresh();

 private:
  explicit PluginInstance(std::shared_ptr<const PluginLibrary> library);
  std::shared_ptr<const PluginLibrary> library_;
  void* instance_ = nullptr;
  schedplug_host host_api_{};
};

}  // namespace schedplug::host
