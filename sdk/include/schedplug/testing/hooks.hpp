// The test kit's calls of the hooks of plugins that own a resource (ABI
// v1.6: reserve, unreserve, permit, pre_bind, pre_enqueue) and the host's
// permit_allow / permit_reject, with the host's rules
// (schedplug/resource_hooks.hpp): the status codes each hook may return,
// the permit timeout's limit, the pod patch's syntax and size. Members of
// Plugin (schedplug/testing/plugin.hpp), defined here. Part of the test
// kit; include schedplug/testing.hpp.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/resource_hooks.hpp"
#include "schedplug/testing/plugin.hpp"

namespace schedplug::testing {

inline Verdict Plugin::reserve(const Pod& pod, const Node& node) const {
  if (d_.reserve == nullptr) return {};
  schedplug_pod p = sent(pod.view());
  p.state = nullptr;
  const schedplug_node n = sent(node.view());
  runtime::ReasonBuffer reason;
  const schedplug_code code = d_.reserve(instance_, &p, &n, reason.get());
  return runtime::resource_hook_verdict(name_, "reserve", code, reason.str(),
                                        false);
}

inline void Plugin::unreserve(const Pod& pod, const Node& node) const {
  schedplug_pod p = sent(pod.view());
  p.state = nullptr;
  stop_waiting(p);
  if (d_.unreserve == nullptr) return;
  const schedplug_node n = sent(node.view());
  d_.unreserve(instance_, &p, &n);
}

inline PermitResult Plugin::permit(const Pod& pod, const Node& node) const {
  if (d_.permit == nullptr) return {};
  schedplug_pod p = sent(pod.view());
  p.state = nullptr;
  const schedplug_node n = sent(node.view());
  schedplug_permit_result out{};
  out.struct_size = sizeof(out);
  runtime::ReasonBuffer reason;
  const schedplug_code code = d_.permit(instance_, &p, &n, &out, reason.get());
  const Verdict v =
      runtime::resource_hook_verdict(name_, "permit", code, reason.str(), true);
  if (v.code != SCHEDPLUG_WAIT) return {v.code, v.reason, 0};
  std::string problem;
  const uint64_t wait = runtime::permit_wait_ms(name_, out.timeout_ms, problem);
  if (!problem.empty()) return {SCHEDPLUG_ERROR, std::move(problem), 0};
  std::lock_guard lock(permits_->mu);
  permits_->waiting.insert(runtime::str_of(p.uid));
  return {SCHEDPLUG_WAIT, v.reason, wait};
}

inline PreBindResult Plugin::pre_bind(const Pod& pod, const Node& node) const {
  schedplug_pod p = sent(pod.view());
  p.state = nullptr;
  stop_waiting(p);
  if (d_.pre_bind == nullptr) return {};
  const schedplug_node n = sent(node.view());
  runtime::PodPatchCollector patch;
  runtime::ReasonBuffer reason;
  const schedplug_code code =
      d_.pre_bind(instance_, &p, &n, patch.get(), reason.get());
  const Verdict v = runtime::resource_hook_verdict(name_, "pre_bind", code,
                                                   reason.str(), false);
  PreBindResult out{v.code, v.reason, patch.labels(), patch.annotations()};
  // A refused entry fails the call whatever the plugin returned.
  if (std::string why = runtime::pre_bind_refused(name_, v, patch);
      !why.empty()) {
    out.code = SCHEDPLUG_ERROR;
    out.reason = std::move(why);
  }
  return out;
}

inline Verdict Plugin::pre_enqueue(const Pod& pod) const {
  if (d_.pre_enqueue == nullptr) return {};
  schedplug_pod p = sent(pod.view());
  p.state = nullptr;
  runtime::ReasonBuffer reason;
  const schedplug_code code = d_.pre_enqueue(instance_, &p, reason.get());
  return runtime::resource_hook_verdict(name_, "pre_enqueue", code,
                                        reason.str(), false);
}

inline std::vector<PermitDecision> Plugin::permit_decisions() const {
  std::lock_guard lock(permits_->mu);
  return permits_->decisions;
}

inline std::string Plugin::unreserve_problem(const Pod& pod,
                                             const Node& node) const {
  if (d_.unreserve == nullptr) return {};
  const schedplug_node n = sent(node.view());
  const std::string before = outcome(pod.view(), n);
  const std::string where = "pod \"" + pod.name() + "\" on node \"" +
                            node.name() + "\" got " + before + " before, and ";
  unreserve(pod, node);
  unreserve(pod, node);
  if (std::string after = outcome(pod.view(), n); after != before) {
    return "plugin " + name_ + "'s unreserve() is not tolerant: " + where +
           after +
           " after unreserve() ran twice for the pod, which it never "
           "reserved; ignore pods you hold nothing for (kube-scheduler calls "
           "unreserve() for every Reserve plugin, a restarted host for pods "
           "it never reserved)";
  }
  if (d_.reserve == nullptr || !reserve(pod, node).ok()) return {};
  unreserve(pod, node);
  unreserve(pod, node);
  if (std::string after = outcome(pod.view(), n); after != before) {
    return "plugin " + name_ +
           "'s unreserve() does not undo reserve(): " + where + after +
           " after reserve() and then unreserve() twice; release exactly "
           "what reserve() took, once";
  }
  return {};
}

inline schedplug_code Plugin::permit_allow(void* context, schedplug_str uid) {
  return static_cast<Plugin*>(context)->decide(uid, true, {});
}

inline schedplug_code Plugin::permit_reject(void* context, schedplug_str uid,
                                            schedplug_str reason) {
  // The host cuts the reason as it cuts a hook's.
  const std::string_view text(reason.data, reason.len);
  return static_cast<Plugin*>(context)->decide(
      uid, false, runtime::valid_utf8(text.substr(0, SCHEDPLUG_REASON_MAX)));
}

inline schedplug_code Plugin::decide(schedplug_str uid, bool allow,
                                     std::string reason) {
  PermitDecision d{runtime::str_of(uid), allow, std::move(reason),
                   SCHEDPLUG_SKIP};
  std::lock_guard lock(permits_->mu);
  if (permits_->waiting.erase(d.uid) > 0) d.answer = SCHEDPLUG_SUCCESS;
  permits_->decisions.push_back(d);
  return d.answer;
}

inline void Plugin::stop_waiting(const schedplug_pod& pod) const {
  std::lock_guard lock(permits_->mu);
  permits_->waiting.erase(runtime::str_of(pod.uid));
}

}  // namespace schedplug::testing
