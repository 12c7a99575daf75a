#include "host/plugin/plugin_instance.hpp"

#include <atomic>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>

#include <spdlog/spdlog.h>

#include "host/plugin/args_services.hpp"
#include "host/plugin/hook_watchdog.hpp"

namespace schedplug::host {
namespace {

using runtime::ReasonBuffer;
using runtime::threw_message;

// The SDK's result types (schedplug/runtime.hpp) as the host's.
Verdict host_verdict(runtime::Verdict v) {
  return {v.code, std::move(v.reason)};
}

void host_log(void* context, schedplug_log_level level, schedplug_str msg) {
  const auto* instance = static_cast<const PluginInstance*>(context);
  const std::string text(msg.data == nullptr ? "" : msg.data, msg.len);
  spdlog::level::level_enum spd = spdlog::level::info;
  switch (level) {
    case SCHEDPLUG_LOG_ERROR:
      spd = spdlog::level::err;
      break;
    case SCHEDPLUG_LOG_WARNING:
      spd = spdlog::level::warn;
      break;
    case SCHEDPLUG_LOG_INFO:
      spd = spdlog::level::info;
      break;
    case SCHEDPLUG_LOG_DEBUG:
      // From -v 4 (trace), as the host's own debug lines: -v 2 adds only
      // one line per call (host/README.md).
      spd = spdlog::level::trace;
      break;
  }
  spdlog::log(spd, "[{}] {}", instance->name(), text);
}

std::string_view view_of(schedplug_str s) {
  return {s.data, s.data == nullptr ? 0 : s.len};
}

// schedplug_host.permit_allow / permit_reject: callable from any thread,
// so nothing may escape into the plugin.
schedplug_code permit_allow(void* context, schedplug_str pod_uid) {
  const auto* instance = static_cast<const PluginInstance*>(context);
  try {
    return instance->waiting().decide(instance->name(), view_of(pod_uid), true,
                                      {});
  } catch (...) {
    return SCHEDPLUG_ERROR;
  }
}

schedplug_code permit_reject(void* context, schedplug_str pod_uid,
                             schedplug_str reason) {
  const auto* instance = static_cast<const PluginInstance*>(context);
  try {
    std::string_view text = view_of(reason);
    if (text.size() >= SCHEDPLUG_REASON_MAX)
      text = text.substr(0, SCHEDPLUG_REASON_MAX - 1);
    return instance->waiting().decide(instance->name(), view_of(pod_uid), false,
                                      runtime::valid_utf8(text));
  } catch (...) {
    return SCHEDPLUG_ERROR;
  }
}

}  // namespace

namespace {
std::atomic<uint64_t> next_serial{1};
}  // namespace

PluginInstance::PluginInstance(std::shared_ptr<const PluginLibrary> library)
    : library_(std::move(library)),
      serial_(next_serial.fetch_add(1, std::memory_order_relaxed)) {
  host_api_.struct_size = sizeof(schedplug_host);
  host_api_.context = this;
  host_api_.log = &host_log;
  host_api_.permit_allow = &permit_allow;
  host_api_.permit_reject = &permit_reject;
  ArgsSession::install(host_api_, nullptr);
  settings_ = runtime::initial_settings(library_->descriptor());
}

std::unique_ptr<PluginInstance> PluginInstance::create(
    std::shared_ptr<const PluginLibrary> library,
    const std::string& args_json) {
  std::unique_ptr<PluginInstance> self(new PluginInstance(std::move(library)));
  const auto& d = self->library_->descriptor();
  const std::string where =
      self->name() + " (" + self->library_->file().string() + ")";
  ReasonBuffer error;
  schedplug_code code = SCHEDPLUG_ERROR;
  // Settings and typed args are valid during create() only (plugin.h).
  self->args_session_ = std::make_unique<ArgsSession>(args_json);
  ArgsSession::install(self->host_api_, self->args_session_.get());
  self->host_api_.settings = &self->settings_;
  auto end_create = [&self] {
    self->host_api_.settings = nullptr;
    ArgsSession::install(self->host_api_, nullptr);
    self->args_session_.reset();
  };
  try {
    code = d.create(args_json.c_str(), args_json.size(), &self->host_api_,
                    &self->instance_, error.get());
  } catch (...) {
    end_create();
    self->instance_ = nullptr;
    throw CreateError(
        runtime::create_threw(where, self->name(), std::current_exception()));
  }
  end_create();
  if (code != SCHEDPLUG_SUCCESS) {
    self->instance_ = nullptr;  // a failed create owns nothing we may free
    throw CreateError(runtime::create_rejected(where, error.str(), args_json));
  }
  self->settings_.struct_size = sizeof(schedplug_settings);
  self->settings_.reserved = 0;
  if (std::string problem = runtime::settings_problem(d, self->settings_);
      !problem.empty()) {
    // `self` is destroyed on the way out, which calls destroy().
    throw CreateError(
        runtime::create_broken_settings(where, problem, args_json));
  }
  // The keys are the instance's memory: copied once, never read again.
  self->pod_keys_.keep(self->settings_);
  return self;
}

PluginInstance::~PluginInstance() {
  const auto& d = library_->descriptor();
  if (d.destroy == nullptr) return;
  try {
    d.destroy(instance_);
  } catch (...) {
    spdlog::error("{}",
                  threw_message(name(), "destroy", std::current_exception()));
  }
}

bool PluginInstance::applies(const schedplug_pod& pod) const {
  const auto& d = library_->descriptor();
  if (d.applies == nullptr) return true;
  try {
    const HookScope watched(this, Hook::kApplies);
    return d.applies(instance_, &pod) != 0;
  } catch (...) {
    // Running the plugin is the safe side: its filter then reports for
    // itself, and the exception is logged.
    spdlog::error("{}",
                  threw_message(name(), "applies", std::current_exception()));
    return true;
  }
}

PodScope PluginInstance::begin_pod(const schedplug_pod& pod) const {
  PodScope scope(this, pod);
  scope.pod_.state = nullptr;
  const auto& d = library_->descriptor();
  if (d.pod_begin == nullptr) {
    const bool runs = applies(pod);
    scope.runs_filter_ = runs;
    scope.runs_score_ = runs;
    return scope;
  }
  schedplug_pod_begin_result result{};
  result.struct_size = sizeof(result);
  ReasonBuffer reason;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kPodBegin);
    code = d.pod_begin(instance_, &pod, &result, reason.get());
  } catch (...) {
    scope.error_ = threw_message(name(), "pod_begin", std::current_exception());
    scope.runs_filter_ = scope.runs_score_ = false;
    return scope;
  }
  if (code != SCHEDPLUG_SUCCESS) {
    scope.error_ = runtime::pod_begin_error(name(), code, reason.str());
    scope.runs_filter_ = scope.runs_score_ = false;
    return scope;
  }
  scope.pod_.state = result.state;
  scope.ended_ = false;
  scope.runs_filter_ = (result.skip & SCHEDPLUG_SKIP_FILTER) == 0;
  scope.runs_score_ = (result.skip & SCHEDPLUG_SKIP_SCORE) == 0;
  return scope;
}

void PluginInstance::end_pod(void* state) const {
  const auto& d = library_->descriptor();
  if (d.pod_end == nullptr) return;
  try {
    const HookScope watched(this, Hook::kPodEnd);
    d.pod_end(instance_, state);
  } catch (...) {
    spdlog::error("{}",
                  threw_message(name(), "pod_end", std::current_exception()));
  }
}

PodScope::PodScope(PodScope&& other) noexcept
    : plugin_(other.plugin_),
      pod_(other.pod_),
      runs_filter_(other.runs_filter_),
      runs_score_(other.runs_score_),
      ended_(other.ended_),
      error_(std::move(other.error_)) {
  other.ended_ = true;
}

PodScope::~PodScope() {
  if (!ended_) plugin_->end_pod(pod_.state);
}

Verdict PluginInstance::filter(const schedplug_pod& pod,
                               const schedplug_node& node) const {
  const auto& d = library_->descriptor();
  if (d.filter == nullptr) return {};
  ReasonBuffer reason;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kFilter);
    code = d.filter(instance_, &pod, &node, reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR,
            threw_message(name(), "filter", std::current_exception())};
  }
  return host_verdict(runtime::filter_verdict(name(), code, reason.str()));
}

schedplug_code PluginInstance::filter_into(const schedplug_pod& pod,
                                           const schedplug_node& node,
                                           FilterCall& call) const {
  const auto& d = library_->descriptor();
  schedplug_reason* reason = call.reset();
  if (d.filter == nullptr) return SCHEDPLUG_SUCCESS;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kFilter);
    code = d.filter(instance_, &pod, &node, reason);
  } catch (...) {
    call.replaced_ = threw_message(name(), "filter", std::current_exception());
    return SCHEDPLUG_ERROR;
  }
  if (!runtime::is_known_code(code)) {
    // The same message as filter() (the SDK's filter_verdict).
    call.replaced_ = runtime::filter_verdict(name(), code, {}).reason;
    return SCHEDPLUG_ERROR;
  }
  if (code != SCHEDPLUG_SUCCESS && !runtime::is_valid_utf8(call.text())) {
    call.replaced_ = runtime::valid_utf8(call.text());
  }
  return code;
}

ScoreResult PluginInstance::score(const schedplug_pod& pod,
                                  const schedplug_node& node) const {
  const auto& d = library_->descriptor();
  if (d.score == nullptr) {
    return {SCHEDPLUG_ERROR, 0, runtime::no_score_hook(name())};
  }
  ReasonBuffer reason;
  int64_t value = 0;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kScore);
    code = d.score(instance_, &pod, &node, &value, reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR, 0,
            threw_message(name(), "score", std::current_exception())};
  }
  // A success has no reason to copy (PreFilter scores ahead call this for
  // every node).
  if (code == SCHEDPLUG_SUCCESS) return {SCHEDPLUG_SUCCESS, value, {}};
  runtime::ScoreResult r =
      runtime::score_result(name(), node, code, value, reason.str());
  return {r.code, r.score, std::move(r.reason)};
}

Verdict PluginInstance::normalize(
    const schedplug_pod& pod, std::span<schedplug_node_score> scores) const {
  if (scores.empty()) return {};
  const auto& d = library_->descriptor();
  if (d.normalize_score != nullptr) {
    ReasonBuffer reason;
    schedplug_code code;
    try {
      const HookScope watched(this, Hook::kNormalizeScore);
      code = d.normalize_score(instance_, &pod, scores.data(), scores.size(),
                               reason.get());
    } catch (...) {
      return {SCHEDPLUG_ERROR, threw_message(name(), "normalize_score",
                                             std::current_exception())};
    }
    if (code != SCHEDPLUG_SUCCESS) {
      return {SCHEDPLUG_ERROR, runtime::normalize_failed(name(), reason.str())};
    }
  } else {
    runtime::apply_policy(settings_.normalize_policy, scores);
  }
  // Never clamp: an out-of-range score is a plugin bug to surface, and
  // kube-scheduler would fail the cycle on it anyway.
  if (std::string problem =
          runtime::out_of_range(name(), d.normalize_score != nullptr, scores);
      !problem.empty()) {
    return {SCHEDPLUG_ERROR, std::move(problem)};
  }
  return {};
}

Verdict PluginInstance::refresh() {
  const auto& d = library_->descriptor();
  if (d.refresh == nullptr) return {};
  ReasonBuffer reason;
  schedplug_code code;
  try {
    code = d.refresh(instance_, reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR,
            threw_message(name(), "refresh", std::current_exception())};
  }
  if (code == SCHEDPLUG_SUCCESS) return {};
  return {SCHEDPLUG_ERROR, runtime::refresh_failed(name(), reason.str())};
}

Verdict PluginInstance::reserve(const schedplug_pod& pod,
                                const schedplug_node& node) const {
  const auto& d = library_->descriptor();
  if (d.reserve == nullptr) return {};
  ReasonBuffer reason;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kReserve);
    code = d.reserve(instance_, &pod, &node, reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR,
            threw_message(name(), "reserve", std::current_exception())};
  }
  return runtime::resource_hook_verdict(name(), "reserve", code, reason.str(),
                                        false);
}

void PluginInstance::unreserve(const schedplug_pod& pod,
                               const schedplug_node& node) const {
  const auto& d = library_->descriptor();
  if (d.unreserve == nullptr) return;
  try {
    const HookScope watched(this, Hook::kUnreserve);
    d.unreserve(instance_, &pod, &node);
  } catch (...) {
    spdlog::error("{}",
                  threw_message(name(), "unreserve", std::current_exception()));
  }
}

Verdict PluginInstance::permit(const schedplug_pod& pod,
                               const schedplug_node& node,
                               uint64_t* timeout_ms) const {
  const auto& d = library_->descriptor();
  *timeout_ms = 0;
  if (d.permit == nullptr) return {};
  ReasonBuffer reason;
  schedplug_permit_result result{};
  result.struct_size = sizeof(result);
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kPermit);
    code = d.permit(instance_, &pod, &node, &result, reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR,
            threw_message(name(), "permit", std::current_exception())};
  }
  Verdict v = runtime::resource_hook_verdict(name(), "permit", code,
                                             reason.str(), true);
  if (v.code == SCHEDPLUG_WAIT) {
    // A wait longer than kube-scheduler allows breaks plugin.h's contract:
    // refused as the test kits refuse it, not cut short in silence.
    std::string problem;
    *timeout_ms = runtime::permit_wait_ms(name(), result.timeout_ms, problem);
    if (!problem.empty()) return {SCHEDPLUG_ERROR, std::move(problem)};
  }
  return v;
}

Verdict PluginInstance::pre_bind(const schedplug_pod& pod,
                                 const schedplug_node& node,
                                 runtime::PodPatchCollector& patch) const {
  const auto& d = library_->descriptor();
  if (d.pre_bind == nullptr) return {};
  ReasonBuffer reason;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kPreBind);
    code = d.pre_bind(instance_, &pod, &node, patch.get(), reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR,
            threw_message(name(), "pre_bind", std::current_exception())};
  }
  Verdict v = runtime::resource_hook_verdict(name(), "pre_bind", code,
                                             reason.str(), false);
  // A refused entry fails the hook: the plugin's choice would not reach
  // the pod whole.
  if (std::string why = runtime::pre_bind_refused(name(), v, patch);
      !why.empty()) {
    return {SCHEDPLUG_ERROR, std::move(why)};
  }
  return v;
}

Verdict PluginInstance::pre_enqueue(const schedplug_pod& pod) const {
  const auto& d = library_->descriptor();
  if (d.pre_enqueue == nullptr) return {};
  ReasonBuffer reason;
  schedplug_code code;
  try {
    const HookScope watched(this, Hook::kPreEnqueue);
    code = d.pre_enqueue(instance_, &pod, reason.get());
  } catch (...) {
    return {SCHEDPLUG_ERROR,
            threw_message(name(), "pre_enqueue", std::current_exception())};
  }
  return runtime::resource_hook_verdict(name(), "pre_enqueue", code,
                                        reason.str(), false);
}

}  // namespace schedplug::host
