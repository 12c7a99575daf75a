// The test kit's harness: Plugin loads a plugin .so (dlopen RTLD_NOW |
// RTLD_LOCAL), checks its descriptor, creates it with the host's args
// services and checks its settings, then calls its hooks as schedplug-host
// does (PodScope: one pod's pod_begin/pod_end), with the host's status
// codes, reasons and normalization (schedplug/runtime.hpp). Its checks of a
// plugin's promises (hints, declared keys and data) are in
// schedplug/testing/checks.hpp, the declared events' in
// schedplug/testing/events.hpp. Part of the test kit; include
// schedplug/testing.hpp. Over 400 lines because the hook calls share one
// class's state (the instance, its settings, the data it is sent).
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"
#include "schedplug/testing/cycle.hpp"
#include "schedplug/testing/node.hpp"
#include "schedplug/testing/pod.hpp"

namespace schedplug::testing {

// Load or create failed; what() is the message schedplug-host would give.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Plugin;

// What permit() answered (ABI v1.6): with SCHEDPLUG_WAIT, how long the pod
// waits (the host's reading: 0 from the plugin is the most).
struct PermitResult {
  schedplug_code code = SCHEDPLUG_SUCCESS;
  std::string reason;
  uint64_t timeout_ms = 0;
};
// What pre_bind() answered, and the labels and annotations it set on the
// pod, checked as the host checks them (a refused entry makes it ERROR).
struct PreBindResult {
  schedplug_code code = SCHEDPLUG_SUCCESS;
  std::string reason;
  std::map<std::string, std::string> labels, annotations;
};
// A call of schedplug_host.permit_allow / permit_reject by the plugin, and
// the kit's answer as the host gives it: SUCCESS for a pod whose permit()
// answered WAIT and that is still waiting (it stops waiting), SKIP for any
// other uid.
struct PermitDecision {
  std::string uid;
  bool allow = false;
  std::string reason;  // permit_reject's
  schedplug_code answer = SCHEDPLUG_SKIP;
};

// One pod as one plugin sees it during a cycle (plugin.h's pod_begin):
// whether its filter and score run, the pod view carrying the plugin's
// state, and the error when pod_begin failed. Destroying it calls pod_end.
// The Pod it was begun from must outlive it.
class PodScope {
 public:
  PodScope(PodScope&& other) noexcept
      : d_(other.d_),
        instance_(other.instance_),
        pod_(other.pod_),
        runs_filter_(other.runs_filter_),
        runs_score_(other.runs_score_),
        ended_(other.ended_),
        error_(std::move(other.error_)) {
    other.ended_ = true;
  }
  PodScope& operator=(PodScope&&) = delete;
  ~PodScope() {
    if (!ended_ && d_->pod_end != nullptr) d_->pod_end(instance_, pod_.state);
  }

  // The pod view to pass to this plugin's filter/score (state set).
  const schedplug_pod& pod() const { return pod_; }
  bool runs_filter() const { return runs_filter_; }
  bool runs_score() const { return runs_score_; }
  // Non-empty when pod_begin failed: the host's message.
  const std::string& error() const { return error_; }

 private:
  friend class Plugin;
  PodScope(const schedplug_plugin* d, void* instance, const schedplug_pod& pod)
      : d_(d), instance_(instance), pod_(pod) {}
  const schedplug_plugin* d_;
  void* instance_;
  schedplug_pod pod_;
  bool runs_filter_ = true;
  bool runs_score_ = true;
  bool ended_ = true;
  std::string error_;
};

// A loaded and created plugin. Not copyable; the .so stays loaded while it
// lives.
class Plugin {
 public:
  // Loads `file` as the host does (dlopen RTLD_NOW | RTLD_LOCAL, the
  // descriptor checks) and creates an instance with `args_json` (its
  // pluginConfig args). Throws Error with the host's message.
  static std::unique_ptr<Plugin> load(const std::filesystem::path& file,
                                      const std::string& args_json = "{}") {
    std::unique_ptr<Plugin> self(new Plugin());
    self->file_ = file;
    self->handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (self->handle_ == nullptr) {
      const char* why = dlerror();
      throw Error(file.string() +
                  ": not a shared object the host can load (dlopen says: " +
                  (why == nullptr ? "unknown error" : why) +
                  "); build the plugin as a shared library (add_library(... "
                  "MODULE) or -shared -fPIC) for this platform, with every "
                  "symbol it needs available");
    }
    void* sym = dlsym(self->handle_, SCHEDPLUG_ENTRY_SYMBOL);
    if (sym == nullptr) {
      throw Error(file.string() + ": exports no `" +
                  std::string(SCHEDPLUG_ENTRY_SYMBOL) +
                  "` function, so it is not a schedplug plugin");
    }
    using Entry = const schedplug_plugin* (*)();
    const schedplug_plugin* entry = reinterpret_cast<Entry>(sym)();
    if (std::string problem = runtime::accept_descriptor(entry, self->d_);
        !problem.empty()) {
      throw Error(file.string() + ": " + problem);
    }
    self->name_ = self->d_.name;
    self->version_ = self->d_.version;
    self->create(args_json);
    return self;
  }

  ~Plugin() {
    if (created_ && d_.destroy != nullptr) d_.destroy(instance_);
    if (handle_ != nullptr) dlclose(handle_);
  }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const schedplug_plugin& descriptor() const { return d_; }
  // The settings after create() (descriptor values as create() changed them).
  const schedplug_settings& settings() const { return settings_; }
  // The data (SCHEDPLUG_DATA_*) the host sends for a profile of this plugin
  // alone: what it declared in create(). The hooks see only that data;
  // add bits with send_data() to test the plugin in a profile where
  // another plugin declared more.
  uint64_t data() const { return settings_.data | extra_data_; }
  Plugin& send_data(uint64_t bits) {
    extra_data_ |= bits;
    return *this;
  }
  // `view` as the plugin's hooks see it: the fields of undeclared data empty.
  schedplug_pod sent(const schedplug_pod& view) const {
    return detail::sent(view, data());
  }
  schedplug_node sent(const schedplug_node& view) const {
    return detail::sent(view, data());
  }
  // What the plugin logged through the host, one "<level>: <text>" a line.
  const std::vector<std::string>& logs() const { return logs_; }

  bool has_filter() const { return d_.filter != nullptr; }
  bool has_score() const { return d_.score != nullptr; }
  bool has_refresh() const { return d_.refresh != nullptr; }

  // ---- Hooks of plugins that own a resource (ABI v1.6), in
  // schedplug/testing/hooks.hpp. Each calls the hook once, as the host
  // does after a cycle placed `pod` on `node`: the views show the declared
  // data, the pod without per-pod state. Without the hook: SUCCESS (and
  // nothing for unreserve). reserve() and pre_enqueue() answer as the host
  // reads them (an unknown code, or SCHEDPLUG_WAIT, is an ERROR).
  bool has_reserve() const { return d_.reserve != nullptr; }
  bool has_unreserve() const { return d_.unreserve != nullptr; }
  bool has_permit() const { return d_.permit != nullptr; }
  bool has_pre_bind() const { return d_.pre_bind != nullptr; }
  bool has_pre_enqueue() const { return d_.pre_enqueue != nullptr; }
  Verdict reserve(const Pod& pod, const Node& node) const;
  void unreserve(const Pod& pod, const Node& node) const;
  // A WAIT longer than SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS is an ERROR saying
  // so; a pod that waits is remembered for permit_allow / permit_reject
  // until they name it, or unreserve() / pre_bind() of the pod.
  PermitResult permit(const Pod& pod, const Node& node) const;
  // The patch checked as the host checks it: Kubernetes label key and
  // value syntax, annotation keys qualified names, values of at most
  // SCHEDPLUG_POD_PATCH_VALUE_MAX bytes, at most SCHEDPLUG_POD_PATCH_MAX
  // entries. A refused entry makes the result ERROR naming it (the
  // entries the host accepted are kept in the maps).
  PreBindResult pre_bind(const Pod& pod, const Node& node) const;
  Verdict pre_enqueue(const Pod& pod) const;
  // The plugin's permit_allow / permit_reject calls so far, in order
  // (from any thread).
  std::vector<PermitDecision> permit_decisions() const;
  // plugin.h's promise for unreserve(): empty when filtering `pod` on
  // `node` answers the same before and after unreserve() ran twice for the
  // pod, which was never reserved, and, with a reserve hook, after
  // reserve() succeeded and unreserve() ran twice; else a sentence saying
  // which changed. Empty without an unreserve hook.
  std::string unreserve_problem(const Pod& pod, const Node& node) const;

  // Begins `pod` for this plugin as the host does once per cycle:
  // pod_begin() when the plugin has one, else applies() for both gates.
  PodScope begin_pod(const Pod& pod) const { return begin_pod(pod.view()); }
  PodScope begin_pod(const schedplug_pod& given) const {
    return begin_pod_sending(given, data());
  }
  // The same on the view as a host sending the data `bits` shows it.
  PodScope begin_pod_sending(const schedplug_pod& given, uint64_t bits) const {
    const schedplug_pod pod = detail::sent(given, bits);
    PodScope scope(&d_, instance_, pod);
    scope.pod_.state = nullptr;
    if (d_.pod_begin == nullptr) {
      scope.runs_filter_ = scope.runs_score_ = applies(pod);
      return scope;
    }
    schedplug_pod_begin_result result{};
    result.struct_size = sizeof(result);
    runtime::ReasonBuffer reason;
    const schedplug_code code =
        d_.pod_begin(instance_, &pod, &result, reason.get());
    if (code != SCHEDPLUG_SUCCESS) {
      scope.error_ = runtime::pod_begin_error(name_, code, reason.str());
      scope.runs_filter_ = scope.runs_score_ = false;
      return scope;
    }
    scope.pod_.state = result.state;
    scope.ended_ = false;
    scope.runs_filter_ = (result.skip & SCHEDPLUG_SKIP_FILTER) == 0;
    scope.runs_score_ = (result.skip & SCHEDPLUG_SKIP_SCORE) == 0;
    return scope;
  }

  // The hooks one at a time, with no per-pod state (the state a plugin's
  // pod_begin makes is passed by run()). applies() is true without the
  // hook; filter() is SUCCESS without it.
  bool applies(const Pod& pod) const { return applies(pod.view()); }
  Verdict filter(const Pod& pod, const Node& node) const {
    return filter(pod.view(), node.view());
  }
  ScoreResult score(const Pod& pod, const Node& node) const {
    return score(pod.view(), node.view());
  }
  // Normalizes raw scores in place, with the plugin's normalize_score or its
  // declared policy, and the host's [0, 100] check.
  Verdict normalize(const Pod& pod,
                    std::span<schedplug_node_score> scores) const {
    return normalize(pod.view(), scores);
  }
  Verdict refresh() {
    if (d_.refresh == nullptr) return {};
    runtime::ReasonBuffer reason;
    const schedplug_code code = d_.refresh(instance_, reason.get());
    if (code == SCHEDPLUG_SUCCESS) return {};
    return {SCHEDPLUG_ERROR, runtime::refresh_failed(name_, reason.str())};
  }

  // The same on views, for harnesses that build their own. Like the
  // others, they show the plugin only the declared data (sent()).
  bool applies(const schedplug_pod& given) const {
    const schedplug_pod pod = sent(given);
    return d_.applies == nullptr || d_.applies(instance_, &pod) != 0;
  }
  // A plugin that promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS is held
  // to it: its filter runs again on the node without its pods (as a
  // preemption dry run may see it), and a different verdict is an ERROR.
  // One that promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY is held to
  // that too (identity_problem): a copy of the pod under another name and
  // uid must get the same applies / pod_begin / filter results; and one that
  // promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS likewise for a
  // copy without its undeclared labels and annotations and with an
  // undeclared one of each (undeclared_keys_problem).
  Verdict filter(const schedplug_pod& given,
                 const schedplug_node& given_node) const {
    const schedplug_pod pod = sent(given);
    const schedplug_node node = sent(given_node);
    Verdict v = filter_once(pod, node);
    if (v.code == SCHEDPLUG_ERROR) return v;
    if (std::string problem = filter_promise_problem(given, pod, node, v);
        !problem.empty()) {
      return {SCHEDPLUG_ERROR, std::move(problem)};
    }
    return v;
  }
  // The promises of the filter hints for `given` on `node` (sent), whose
  // filter answered `v` for `pod` (sent, with its state): the node's pods,
  // then the pod's identity and its undeclared keys. The first one broken,
  // in a sentence, or empty.
  std::string filter_promise_problem(const schedplug_pod& given,
                                     const schedplug_pod& pod,
                                     const schedplug_node& node,
                                     const Verdict& v) const;
  // For a plugin that promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY:
  // begins `given` afresh (pod_begin, else applies) and filters it on
  // `node`, then does the same for a copy named "twin-of-<name>" with the
  // uid "twin-of-<uid>"; a sentence naming what differed, or empty (also
  // when the plugin made no such promise).
  std::string identity_problem(const schedplug_pod& given,
                               const schedplug_node& given_node) const;
  // For a plugin that promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY:
  // begins `given` afresh (pod_begin, else applies), scores it on `nodes`
  // (sent) and, when `normalized`, normalizes those scores; then does the
  // same for a copy named "twin-of-<name>" with the uid "twin-of-<uid>". A
  // sentence naming what differed, or empty (also when the plugin made no
  // such promise).
  std::string score_identity_problem(const schedplug_pod& given,
                                     std::span<const schedplug_node> nodes,
                                     bool normalized) const;
  // The label and annotation key the copy of undeclared_keys_problem gains
  // (with the value "x"), unless the plugin declared it.
  static constexpr const char* kUndeclaredKey = "schedplug-kit.test/undeclared";
  // For a plugin that promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS:
  // begins `given` afresh (pod_begin, else applies) and filters it on
  // `node`, then does the same for a copy that keeps only the labels and
  // annotations whose keys the plugin declared (pod_keys()) and gains the
  // undeclared label and annotation kUndeclaredKey: "x"; a sentence naming
  // what differed, or empty (also when the plugin made no such promise).
  std::string undeclared_keys_problem(const schedplug_pod& given,
                                      const schedplug_node& given_node) const;
  // The pod label and annotation keys the plugin declared in create()
  // (plugin.h v1.4), copied and sorted as the host copies them.
  const runtime::PodKeys& pod_keys() const { return pod_keys_; }
  // The filter hook once, on views as sent() gives them.
  Verdict filter_once(const schedplug_pod& pod,
                      const schedplug_node& node) const {
    if (d_.filter == nullptr) return {};
    runtime::ReasonBuffer reason;
    const schedplug_code code = d_.filter(instance_, &pod, &node, reason.get());
    return runtime::filter_verdict(name_, code, reason.str());
  }
  // A plugin that promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY is
  // held to it: a copy of the pod under another name and uid must get the
  // same applies / pod_begin / score results (score_identity_problem), or
  // the score is an ERROR naming the broken promise.
  ScoreResult score(const schedplug_pod& given,
                    const schedplug_node& given_node) const {
    if (d_.score == nullptr) {
      return {SCHEDPLUG_ERROR, 0, runtime::no_score_hook(name_)};
    }
    const schedplug_node node = sent(given_node);
    ScoreResult s = score_once(sent(given), node);
    if (s.code != SCHEDPLUG_SUCCESS) return s;
    if (std::string problem = score_identity_problem(given, {&node, 1}, false);
        !problem.empty()) {
      return {SCHEDPLUG_ERROR, 0, std::move(problem)};
    }
    return s;
  }
  // The score hook once, on views as sent() gives them.
  ScoreResult score_once(const schedplug_pod& pod,
                         const schedplug_node& node) const {
    if (d_.score == nullptr) {
      return {SCHEDPLUG_ERROR, 0, runtime::no_score_hook(name_)};
    }
    runtime::ReasonBuffer reason;
    int64_t value = 0;
    const schedplug_code code =
        d_.score(instance_, &pod, &node, &value, reason.get());
    return runtime::score_result(name_, node, code, value, reason.str());
  }
  // The promise of SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY covers
  // normalization: the same raw scores normalized for a copy of the pod
  // under another name and uid (begun afresh) must come out the same, or
  // this is an ERROR naming the broken promise.
  Verdict normalize(const schedplug_pod& given,
                    std::span<schedplug_node_score> scores) const {
    const std::vector<schedplug_node_score> raw(scores.begin(), scores.end());
    Verdict v = normalize_once(sent(given), scores);
    if (!v.ok() || scores.empty() ||
        (settings_.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) == 0) {
      return v;
    }
    const Twin twin(given);
    const std::string got = normalize_outcome(twin.again, raw);
    const std::string twin_got = normalize_outcome(twin.twin, raw);
    if (got == twin_got) return v;
    return {
        SCHEDPLUG_ERROR,
        twin.differs("SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY", name_,
                     "normalizing the raw scores " + scores_listed(raw) + ", ",
                     got, twin_got, "applies, pod_begin and normalize_score")};
  }
  // Normalization once, on a view as sent() gives it: the plugin's
  // normalize_score or its declared policy, and the host's [0, 100] check.
  Verdict normalize_once(const schedplug_pod& pod,
                         std::span<schedplug_node_score> scores) const {
    if (scores.empty()) return {};
    if (d_.normalize_score != nullptr) {
      runtime::ReasonBuffer reason;
      const schedplug_code code = d_.normalize_score(
          instance_, &pod, scores.data(), scores.size(), reason.get());
      if (code != SCHEDPLUG_SUCCESS) {
        return {SCHEDPLUG_ERROR,
                runtime::normalize_failed(name_, reason.str())};
      }
    } else {
      runtime::apply_policy(settings_.normalize_policy, scores);
    }
    if (std::string problem =
            runtime::out_of_range(name_, d_.normalize_score != nullptr, scores);
        !problem.empty()) {
      return {SCHEDPLUG_ERROR, std::move(problem)};
    }
    return {};
  }

  // One scheduling cycle of `pod` over `nodes`, as schedplug-host runs it:
  // pod_begin once (or applies() for both gates), filter on every node,
  // score on the nodes that passed, normalization of those scores, then
  // pod_end. A filter or score ERROR fails the cycle (Cycle::error), as it
  // fails the pod in kube-scheduler. The hints' promises are checked as
  // filter() checks them, and the score identity promise on the whole score
  // pass (gates, scores, normalization) at once; the first broken promise
  // fails the cycle, and no other promise is checked in it, so that it is
  // reported once.
  //
  // The hooks see only the declared data (data()), as on the host. When the
  // pod or the nodes carry data the plugin did not declare, the cycle runs
  // again with each such bit sent; if that changes an answer (a gate, a
  // verdict or reason, a raw or normalized score, the cycle's error), the
  // plugin reads data it did not declare: the rows stay as the host would
  // answer, and Cycle::error is a sentence naming the bit to declare, the
  // hook and the node (undeclared_data_problem). Those extra cycles run
  // before the host's, so the hooks' last calls see what the host would
  // send; a plugin that logs sees them in logs().
  Cycle run(const Pod& pod, std::span<const Node> nodes) const {
    // The check's cycles first: a plugin keeping what it saw last keeps the
    // host's view.
    std::string problem = undeclared_data_problem(pod, nodes);
    Cycle cycle = run_sending(pod, nodes, data(), true);
    if (!problem.empty()) {
      cycle.error =
          cycle.error.empty()
              ? std::move(problem)
              : std::move(problem) + "; the cycle failed too: " + cycle.error;
    }
    return cycle;
  }
  Cycle run(const Pod& pod, std::initializer_list<Node> nodes) const {
    return run(pod, std::span<const Node>(nodes.begin(), nodes.size()));
  }
  // Empty when the hooks answer the same for `pod` over `nodes` with the
  // declared data only and with each undeclared SCHEDPLUG_DATA_* bit the
  // test gave (pod and nodes carry it); else a sentence: which bits change
  // the answers, where (hook, node), and to declare them.
  std::string undeclared_data_problem(const Pod& pod,
                                      std::span<const Node> nodes) const;
  // Where two cycles of one pod first differ, in words: "on node \"n\" its
  // filter answered X" for the first (`where`), the second's answer
  // (`with`). Empty when they answered the same.
  struct Difference {
    std::string where, with;
  };
  Difference cycle_difference(const Cycle& a, const Cycle& b) const;

  // One cycle as run() makes it, the hooks seeing the data `bits`; the
  // hints' promises are checked when `promises`.
  Cycle run_sending(const Pod& pod, std::span<const Node> nodes, uint64_t bits,
                    bool promises) const {
    Cycle cycle;
    const PodScope scope = begin_pod_sending(pod.view(), bits);
    if (!scope.error().empty()) {
      cycle.error = scope.error();
      return cycle;
    }
    const schedplug_pod& view = scope.pod();
    cycle.filter_skipped = !scope.runs_filter() || d_.filter == nullptr;
    cycle.score_skipped = !scope.runs_score() || d_.score == nullptr;

    std::vector<schedplug_node_score> scores;
    std::vector<size_t> scored_rows;
    std::vector<schedplug_node> feasible_nodes;  // sent
    for (const Node& node : nodes) {
      NodeResult row;
      row.node = node.name();
      const schedplug_node nv = detail::sent(node.view(), bits);
      // Promises are checked until the cycle has failed.
      std::string broken;
      if (cycle.filter_skipped) {
        row.filter = {SCHEDPLUG_SKIP, {}};
        // A promise about the pod's identity or its undeclared labels and
        // annotations covers the gates too: a pod whose filter was skipped
        // is checked like one whose filter ran.
        if (promises && d_.filter != nullptr && cycle.error.empty()) {
          broken = pod_promise_problem(pod.view(), nv);
        }
      } else {
        row.filter = filter_once(view, nv);
        if (promises && row.filter.code != SCHEDPLUG_ERROR &&
            cycle.error.empty()) {
          broken = filter_promise_problem(pod.view(), view, nv, row.filter);
        }
      }
      if (!broken.empty()) row.filter = {SCHEDPLUG_ERROR, std::move(broken)};
      if (row.filter.code == SCHEDPLUG_ERROR && cycle.error.empty()) {
        cycle.error = row.filter.reason;
      }
      const bool feasible = row.filter.code == SCHEDPLUG_SUCCESS ||
                            row.filter.code == SCHEDPLUG_SKIP;
      if (feasible) feasible_nodes.push_back(nv);
      if (feasible && !cycle.score_skipped) {
        ScoreResult s = score_once(view, nv);
        if (s.code != SCHEDPLUG_SUCCESS) {
          if (cycle.error.empty()) cycle.error = s.reason;
        } else {
          row.scored = true;
          row.raw = s.score;
          scores.push_back({detail::str(node.name()), s.score});
          scored_rows.push_back(cycle.nodes.size());
        }
      }
      cycle.nodes.push_back(std::move(row));
    }
    if (cycle.error.empty() && !scores.empty()) {
      Verdict normalized = normalize_once(view, scores);
      if (!normalized.ok()) {
        cycle.error = normalized.reason;
      } else {
        for (size_t i = 0; i < scores.size(); ++i) {
          cycle.nodes[scored_rows[i]].score = scores[i].score;
        }
      }
    }
    // The gates count, as for the filter: checked also when they skipped
    // score, on the nodes that passed filter.
    if (promises && cycle.error.empty() && d_.score != nullptr) {
      cycle.error = score_identity_problem(pod.view(), feasible_nodes, true);
    }
    return cycle;  // ~PodScope calls pod_end
  }

  // ---- Declared events (SCHEDPLUG_EVENT_*), in schedplug/testing/events.hpp
  // The events after which kube-scheduler requeues a pod this plugin
  // rejected, as the shim registers them: the declared events (kEvents, as
  // create() left them), every event (SCHEDPLUG_EVENT_ALL) for 0.
  uint64_t requeue_events() const;
  // Whether the declared events requeue `pod` after node `before` becomes
  // `after` (two states of one node): empty when the plugin's filter rejects
  // the pod on `before`, passes it on `after`, and the change is an event
  // it declared (change_events); else a sentence: the broken promise (the
  // change's events, which to add), a change no event reports, or why there
  // is nothing to check (no rejection before, no pass after, a failed
  // cycle). Each state is a cycle of its own, as run() makes it.
  std::string requeue_problem(const Pod& pod, const Node& before,
                              const Node& after) const;
  // The same for `added`, a node added to the cluster: the pod must pass on
  // it, and SCHEDPLUG_EVENT_NODE_ADD be declared.
  std::string requeue_problem(const Pod& pod, const Node& added) const;
  // One cycle of `pod` over `nodes` as run() makes it, after a change from
  // `before` (the nodes as they were, matched by name; a node not in
  // `before` was added). Each node whose rejection of the pod turned into a
  // pass is held to the declared events as requeue_problem() holds it, and
  // so is each added node that passes the pod when a node of `before`
  // rejected it; the first broken promise fails the cycle (Cycle::error),
  // reported once.
  Cycle run_after(const Pod& pod, std::span<const Node> before,
                  std::span<const Node> nodes) const;
  Cycle run_after(const Pod& pod, std::initializer_list<Node> before,
                  std::initializer_list<Node> nodes) const {
    return run_after(pod, std::span<const Node>(before.begin(), before.size()),
                     std::span<const Node>(nodes.begin(), nodes.size()));
  }

 private:
  Plugin() = default;

  static runtime::ArgsSession* session_of(void* context) {
    return static_cast<Plugin*>(context)->args_session_.get();
  }

  static void log(void* context, schedplug_log_level level, schedplug_str msg) {
    auto* self = static_cast<Plugin*>(context);
    static constexpr const char* kLevels[] = {"error", "warning", "info",
                                              "debug"};
    const char* name = level >= 0 && level < 4 ? kLevels[level] : "log";
    self->logs_.push_back(std::string(name) + ": " + runtime::str_of(msg));
  }

  // The promises about the pod (identity, then undeclared keys): the first
  // one broken on `node`, in a sentence, or empty.
  std::string pod_promise_problem(const schedplug_pod& given,
                                  const schedplug_node& node) const;

  // `list` (entries `kv_size` apart) with only the entries whose keys are
  // in `keep` (sorted), plus `extra`: `value`, still sorted; the entries
  // are laid out `kv_size` apart in `store`, the keys left out appended to
  // `dropped`. Keys and values view `list`'s and the arguments' bytes.
  static schedplug_kv_list only_declared(schedplug_kv_list list,
                                         uint64_t kv_size,
                                         const std::vector<std::string>& keep,
                                         const std::string& extra,
                                         const std::string& value,
                                         std::vector<std::string>& dropped,
                                         std::vector<uint64_t>& store) {
    std::vector<schedplug_kv> kept;
    for (uint64_t i = 0; i < list.count; ++i) {
      const auto* kv = static_cast<const schedplug_kv*>(
          schedplug_element_at(list.items, kv_size, i));
      const std::string key = runtime::str_of(kv->key);
      if (std::binary_search(keep.begin(), keep.end(), key)) {
        kept.push_back(*kv);
      } else {
        dropped.push_back(key);
      }
    }
    const schedplug_kv added{detail::str(extra), detail::str(value)};
    kept.insert(
        std::lower_bound(kept.begin(), kept.end(), added,
                         [](const schedplug_kv& a, const schedplug_kv& b) {
                           return schedplug_str_cmp(a.key, b.key) < 0;
                         }),
        added);
    const uint64_t stride = std::max<uint64_t>(kv_size, sizeof(schedplug_kv));
    store.assign(
        (kept.size() * stride + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    auto* bytes = reinterpret_cast<char*>(store.data());
    for (size_t i = 0; i < kept.size(); ++i) {
      std::memcpy(bytes + i * stride, &kept[i], sizeof(schedplug_kv));
    }
    return {reinterpret_cast<const schedplug_kv*>(store.data()), kept.size()};
  }

  static bool rejects(const Verdict& v) {
    return v.code == SCHEDPLUG_UNSCHEDULABLE ||
           v.code == SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
  }
  // For the declared events: the filter turned from `before` (a rejection;
  // nullptr: the node was added) to `after` (a pass) on `node` for `pod`
  // with a change of the events `change`. The sentence when no declared
  // event covers it, else empty.
  std::string events_problem(const std::string& pod, const std::string& node,
                             const Verdict* before, const Verdict& after,
                             uint64_t change) const;
  // requeue_problem() for the node `before` (nullptr: `after` was added)
  // becoming `after`.
  std::string requeue_check(const Pod& pod, const Node* before,
                            const Node& after) const;

  static std::string said(const Verdict& x) {
    return std::string(code_name(x.code)) +
           (x.reason.empty() ? "" : " (\"" + x.reason + "\")");
  }

  // How pod_begin (or applies) gated the pod of `scope`, in words; empty
  // without either hook.
  std::string gates(const PodScope& scope) const {
    if (d_.pod_begin != nullptr) {
      if (!scope.error().empty()) {
        return "pod_begin failing (" + scope.error() + ")";
      }
      const char* skipped = "nothing";
      if (!scope.runs_filter()) {
        skipped = scope.runs_score() ? "filter" : "filter and score";
      } else if (!scope.runs_score()) {
        skipped = "score";
      }
      return std::string("pod_begin skipping ") + skipped;
    }
    if (d_.applies != nullptr) {
      return std::string("applies ") + (scope.runs_filter() ? "true" : "false");
    }
    return {};
  }
  static std::string then(const std::string& before, const std::string& next) {
    return before.empty() ? next : before + ", then " + next;
  }

  // What the host would make of `pod` on `node`, in words: how pod_begin
  // (or applies) gated it, then the filter's verdict.
  std::string outcome(const schedplug_pod& pod,
                      const schedplug_node& node) const {
    const PodScope scope = begin_pod(pod);
    const std::string out = gates(scope);
    if (!scope.error().empty() || !scope.runs_filter()) return out;
    return then(out, "filter " + said(filter_once(scope.pod(), node)));
  }
  // The same for scoring `pod` on `nodes` (sent): the gates, each node's
  // score, and when `normalized` the normalized scores.
  std::string score_outcome(const schedplug_pod& pod,
                            std::span<const schedplug_node> nodes,
                            bool normalized) const {
    const PodScope scope = begin_pod(pod);
    const std::string out = gates(scope);
    if (!scope.error().empty() || !scope.runs_score()) return out;
    std::vector<schedplug_node_score> scores;
    std::string each;
    for (const schedplug_node& node : nodes) {
      const ScoreResult s = score_once(scope.pod(), node);
      each += (each.empty() ? "\"" : ", \"") + runtime::str_of(node.name) +
              "\" " +
              (s.code == SCHEDPLUG_SUCCESS ? std::to_string(s.score)
                                           : said({s.code, s.reason}));
      if (s.code == SCHEDPLUG_SUCCESS) scores.push_back({node.name, s.score});
    }
    std::string scored =
        then(out, "score " + (each.empty() ? "on no node" : each));
    if (!normalized || scores.empty()) return scored;
    const Verdict v = normalize_once(scope.pod(), scores);
    return scored + (v.ok() ? ", normalized " + scores_listed(scores)
                            : ", normalization " + said(v));
  }
  // The same for normalizing `raw` for `pod`: the gates, then the
  // normalized scores.
  std::string normalize_outcome(const schedplug_pod& pod,
                                std::vector<schedplug_node_score> raw) const {
    const PodScope scope = begin_pod(pod);
    const std::string out = gates(scope);
    if (!scope.error().empty() || !scope.runs_score()) return out;
    const Verdict v = normalize_once(scope.pod(), raw);
    return then(out, v.ok() ? "normalized " + scores_listed(raw)
                            : "normalization " + said(v));
  }
  // "\"a\" 1, \"b\" 2"
  static std::string scores_listed(
      std::span<const schedplug_node_score> scores) {
    std::string out;
    for (const schedplug_node_score& s : scores) {
      out += (out.empty() ? "\"" : ", \"") + runtime::str_of(s.node_name) +
             "\" " + std::to_string(s.score);
    }
    return out;
  }

  // `given` begun afresh (no state) and a copy named "twin-of-<name>" with
  // the uid "twin-of-<uid>", for the identity promises. Not copyable: the
  // copy views its strings.
  struct Twin {
    explicit Twin(const schedplug_pod& given)
        : name(runtime::str_of(given.name)),
          uid(runtime::str_of(given.uid)),
          twin_name("twin-of-" + name),
          twin_uid("twin-of-" + uid),
          again(given) {
      again.state = nullptr;
      twin = again;
      twin.name = detail::str(twin_name);
      twin.uid = detail::str(twin_uid);
    }
    Twin(const Twin&) = delete;
    Twin& operator=(const Twin&) = delete;

    // The sentence for plugin `plugin`'s broken `hint`: `where` (empty or
    // ending in a space) the pod got `got` and the copy `twin_got`; the
    // advice names the `hooks` that must not read name and uid.
    std::string differs(const char* hint, const std::string& plugin,
                        const std::string& where, const std::string& got,
                        const std::string& twin_got, const char* hooks) const {
      return plugin + " promised " + hint + " (kHints), but " + where +
             "pod \"" + name + "\" (uid \"" + uid + "\") got " + got +
             " and a copy named \"" + twin_name + "\" (uid \"" + twin_uid +
             "\") got " + twin_got +
             "; drop the hint, or read neither the pod's name nor its uid "
             "in " +
             hooks;
    }

    const std::string name, uid, twin_name, twin_uid;
    schedplug_pod again;
    schedplug_pod twin{};
  };

  void create(const std::string& args_json) {
    host_.struct_size = sizeof(schedplug_host);
    host_.context = this;
    host_.log = &Plugin::log;
    host_.permit_allow = &Plugin::permit_allow;
    host_.permit_reject = &Plugin::permit_reject;
    settings_ = runtime::initial_settings(d_);
    args_session_ = std::make_unique<runtime::ArgsSession>(args_json);
    runtime::ArgsSession::install<&Plugin::session_of>(host_,
                                                       args_session_.get());
    host_.settings = &settings_;
    const std::string where = name_ + " (" + file_.string() + ")";
    runtime::ReasonBuffer error;
    schedplug_code code = SCHEDPLUG_ERROR;
    try {
      code = d_.create(args_json.c_str(), args_json.size(), &host_, &instance_,
                       error.get());
    } catch (...) {
      end_create();
      throw Error(
          runtime::create_threw(where, name_, std::current_exception()));
    }
    end_create();
    if (code != SCHEDPLUG_SUCCESS) {
      throw Error(runtime::create_rejected(where, error.str(), args_json));
    }
    created_ = true;
    settings_.struct_size = sizeof(schedplug_settings);
    settings_.reserved = 0;
    if (std::string problem = runtime::settings_problem(d_, settings_);
        !problem.empty()) {
      throw Error(runtime::create_broken_settings(where, problem, args_json));
    }
    // The keys are the instance's memory: copied once, never read again.
    pod_keys_.keep(settings_);
  }
  void end_create() {
    host_.settings = nullptr;
    runtime::ArgsSession::install<&Plugin::session_of>(host_, nullptr);
    args_session_.reset();
  }

  std::filesystem::path file_;
  void* handle_ = nullptr;
  schedplug_plugin d_{};
  std::string name_, version_;
  void* instance_ = nullptr;
  bool created_ = false;
  schedplug_host host_{};
  schedplug_settings settings_{};
  runtime::PodKeys pod_keys_;
  std::unique_ptr<runtime::ArgsSession> args_session_;
  std::vector<std::string> logs_;
  uint64_t extra_data_ = 0;
  // The pods permit() made wait and the plugin's decisions; behind a
  // pointer so that the const hooks and the host's functions can change it.
  struct Permits {
    std::mutex mu;
    std::set<std::string> waiting;
    std::vector<PermitDecision> decisions;
  };
  std::unique_ptr<Permits> permits_ = std::make_unique<Permits>();
  static schedplug_code permit_allow(void* context, schedplug_str uid);
  static schedplug_code permit_reject(void* context, schedplug_str uid,
                                      schedplug_str reason);
  schedplug_code decide(schedplug_str uid, bool allow, std::string reason);
  void stop_waiting(const schedplug_pod& pod) const;
};

}  // namespace schedplug::testing
