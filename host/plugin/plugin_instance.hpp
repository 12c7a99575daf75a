// One created instance of a plugin (one per profile that enables it), and
// the safe way to call its hooks.
//
// Every call goes through here so that the host-side rules hold in one
// place: reasons are copied out of host-owned buffers, an exception that
// escapes a hook becomes an Error naming the plugin, scores are normalized
// and range-checked.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "host/loader/plugin_library.hpp"
#include "host/plugin/hook_cost.hpp"
#include "host/plugin/waiting_pods.hpp"
#include "schedplug/plugin.h"
#include "schedplug/resource_hooks.hpp"
#include "schedplug/runtime.hpp"

namespace schedplug::host {

class ArgsSession;
class PluginInstance;

// A hook's result, as the SDK's test kit sees it too (one definition, so
// the kit cannot drift from the host).
using Verdict = runtime::Verdict;
using ScoreResult = runtime::ScoreResult;

// A filter call's reason, reused across the calls of one PreFilter chunk.
class FilterCall {
 public:
  // The reason of the last filter_into(): the plugin's text (as valid
  // UTF-8), or the host's message for a plugin that threw or returned an
  // unknown code.
  std::string_view reason() const {
    if (replaced_) return *replaced_;
    return text();
  }

 private:
  friend class PluginInstance;
  schedplug_reason* reset() {
    text_[0] = '\0';
    replaced_.reset();
    reason_ = {text_, sizeof(text_)};
    return &reason_;
  }
  std::string_view text() const {
    return {text_, strnlen(text_, sizeof(text_))};
  }
  char text_[SCHEDPLUG_REASON_MAX];
  schedplug_reason reason_{};
  // What reason() shows instead of text_: the host's message, or the
  // plugin's text made valid UTF-8.
  std::optional<std::string> replaced_;
};

// create() failed. what() names the plugin, its file and the plugin's own
// message (e.g. "HwEncrypt (/plugins/hw.so) rejected its args: ...").
class CreateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One pod as one plugin sees it (plugin.h's pod_begin): whether its filter
// and score run for the pod, the pod view carrying the plugin's state, and
// an error when pod_begin failed. Destroying it calls pod_end; it must
// outlive every filter/score call that received pod().
class PodScope {
 public:
  PodScope(PodScope&& other) noexcept;
  PodScope& operator=(PodScope&&) = delete;
  PodScope(const PodScope&) = delete;
  PodScope& operator=(const PodScope&) = delete;
  ~PodScope();

  // The pod view to hand to this plugin's filter/score (pod->state set).
  const schedplug_pod& pod() const { return pod_; }
  bool runs_filter() const { return runs_filter_; }
  bool runs_score() const { return runs_score_; }
  // Non-empty when pod_begin failed: a sentence naming the plugin; the
  // pod's Filter/Score then fails with it as an Error.
  const std::string& error() const { return error_; }

 private:
  friend class PluginInstance;
  PodScope(const PluginInstance* plugin, const schedplug_pod& pod)
      : plugin_(plugin), pod_(pod) {}
  const PluginInstance* plugin_;
  schedplug_pod pod_;
  bool runs_filter_ = true;
  bool runs_score_ = true;
  bool ended_ = true;  // false while a pod_begin state awaits pod_end
  std::string error_;
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
  // Unique among the instances this process ever created: unlike the
  // instance's address, never reused after a reload frees it.
  uint64_t serial() const { return serial_; }
  // This instance's settings: the descriptor's, as create() changed them
  // (plugin.h v1.1), validated.
  const schedplug_settings& settings() const { return settings_; }
  // The pod label and annotation keys of its settings (plugin.h v1.4),
  // copied out of the plugin after create(), sorted; settings()' key arrays
  // view these copies.
  const runtime::PodKeys& pod_keys() const { return pod_keys_; }
  // The typed-args session; non-NULL only while create() runs.
  ArgsSession* args_session() const { return args_session_.get(); }

  // The hooks below are safe to call concurrently (plugin.h's contract).

  // applies() hook; true when absent.
  bool applies(const schedplug_pod& pod) const;
  // Starts `pod` for this plugin: pod_begin() when the plugin has one,
  // else applies() for both gates. Filter and score calls for the pod take
  // scope.pod().
  PodScope begin_pod(const schedplug_pod& pod) const;
  // filter(); SUCCESS when the plugin has no filter.
  Verdict filter(const schedplug_pod& pod, const schedplug_node& node) const;
  // The same for PreFilter's walk over every node, without allocating:
  // the reason stays in `call` (valid until its next use), so thousands of
  // rejections with the same reason cost no string each.
  schedplug_code filter_into(const schedplug_pod& pod,
                             const schedplug_node& node,
                             FilterCall& call) const;
  // score(); raw value.
  ScoreResult score(const schedplug_pod& pod, const schedplug_node& node) const;
  // Normalizes raw scores in place into [0, 100] with the plugin's own
  // normalize_score or its declared policy. Returns a Verdict whose reason
  // names the plugin (and the node, for an out-of-range value) on failure.
  Verdict normalize(const schedplug_pod& pod,
                    std::span<schedplug_node_score> scores) const;
  // refresh(); SUCCESS when the plugin has none.
  Verdict refresh();

  // The v1.6 hooks (plugin.h), each SUCCESS when the plugin lacks it. A
  // SKIP is a SUCCESS (the plugin has nothing to say about the pod); an
  // exception, an unknown code or WAIT from another hook than permit() is
  // an ERROR whose reason names the plugin and the hook.
  Verdict reserve(const schedplug_pod& pod, const schedplug_node& node) const;
  // Exceptions are logged: unreserve() cannot fail.
  void unreserve(const schedplug_pod& pod, const schedplug_node& node) const;
  // With SCHEDPLUG_WAIT, *timeout_ms is how long the pod may wait (1 ms to
  // SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS).
  Verdict permit(const schedplug_pod& pod, const schedplug_node& node,
                 uint64_t* timeout_ms) const;
  // What the plugin set goes into `patch`; an entry the host refused fails
  // the call even when the plugin returned SUCCESS.
  Verdict pre_bind(const schedplug_pod& pod, const schedplug_node& node,
                   runtime::PodPatchCollector& patch) const;
  Verdict pre_enqueue(const schedplug_pod& pod) const;
  // The pods its permit() made wait, and where its decisions go.
  WaitingPods& waiting() const { return waiting_; }

  // What its filter and score calls cost (the chain decides from it
  // whether to share a loop over nodes with the pool's workers).
  HookCost& filter_cost() const { return filter_cost_; }
  HookCost& score_cost() const { return score_cost_; }

 private:
  explicit PluginInstance(std::shared_ptr<const PluginLibrary> library);
  friend class PodScope;
  void end_pod(void* state) const;

  std::shared_ptr<const PluginLibrary> library_;
  const uint64_t serial_;
  void* instance_ = nullptr;
  schedplug_host host_api_{};
  schedplug_settings settings_{};
  runtime::PodKeys pod_keys_;
  std::unique_ptr<ArgsSession> args_session_;
  mutable HookCost filter_cost_;
  mutable HookCost score_cost_;
  mutable WaitingPods waiting_;
};

}  // namespace schedplug::host
