#include "host/runtime/plugin_instance.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>

#include <spdlog/spdlog.h>

#include "host/runtime/args_services.hpp"
#include "host/runtime/hook_watchdog.hpp"

namespace schedplug::host {
namespace {

// A host-owned reason buffer for one hook call (plugin.h: the host copies
// the text after the hook returns).
class ReasonBuffer {
 public:
  ReasonBuffer() { text_[0] = '\0'; }
  schedplug_reason* get() {
    reason_ = {text_, sizeof(text_)};
    return &reason_;
  }
  // Copies the text out, tolerating a plugin that forgot the NUL.
  std::string str() const {
    return std::string(text_, strnlen(text_, sizeof(text_)));
  }

 private:
  char text_[SCHEDPLUG_REASON_MAX];
  schedplug_reason reason_{};
};

std::string threw_message(const std::string& plugin, const char* hook,
                          std::exception_ptr error) {
  std::string what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  return "plugin " + plugin + " threw through the C ABI: " + what + " (from " +
         hook +
         "(); C++ plugins must catch every exception at the boundary, as the "
         "SDK's C++ layer does)";
}

bool is_known_code(int code) {
  switch (code) {
    case SCHEDPLUG_SUCCESS:
    case SCHEDPLUG_ERROR:
    case SCHEDPLUG_UNSCHEDULABLE:
    case SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE:
    case SCHEDPLUG_SKIP:
      return true;
    default:
      return false;
  }
}

std::string node_name_of(const schedplug_node_score& s) {
  return std::string(s.node_name.data == nullptr ? "" : s.node_name.data,
                     s.node_name.len);
}

// Maps raw scores onto [0, 100] by min-max. Every node gets 100 when all
// raw scores are equal: the nodes are equally good, and 100 keeps the
// plugin's weight meaningful against other plugins.
void min_max(std::span<schedplug_node_score> scores, bool reverse) {
  auto [lo_it, hi_it] = std::minmax_element(
      scores.begin(), scores.end(),
      [](const auto& a, const auto& b) { return a.score < b.score; });
  const int64_t lo = lo_it->score;
  const int64_t hi = hi_it->score;
  if (lo == hi) {
    for (auto& s : scores) s.score = 100;
    return;
  }
  // Differences of int64 values fit in uint64 (modular arithmetic gives
  // the exact distance when hi >= lo); the product needs 128 bits.
  __extension__ typedef unsigned __int128 wide;
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  for (auto& s : scores) {
    const uint64_t offset =
        reverse ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(s.score)
                : static_cast<uint64_t>(s.score) - static_cast<uint64_t>(lo);
    s.score = static_cast<int64_t>(
        (static_cast<wide>(offset) * 100 + range / 2) / range);
  }
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
      spd = spdlog::level::debug;
      break;
  }
  spdlog::log(spd, "[{}] {}", instance->name(), text);
}

}  // namespace

// The rules of plugin.h for settings create() returned; a sentence naming
// the problem, or empty.
static std::string settings_problem(const schedplug_plugin& d,
                                    const schedplug_settings& s) {
  if (s.normalize_policy > SCHEDPLUG_NORMALIZE_REVERSE) {
    return "normalize_policy " + std::to_string(s.normalize_policy) +
           " is not one of NONE (0), LINEAR (1), REVERSE (2)";
  }
  if (d.normalize_score != nullptr &&
      s.normalize_policy != SCHEDPLUG_NORMALIZE_NONE) {
    return "a normalize_policy was set but the plugin implements "
           "normalize_score; use one of them";
  }
  if (d.refresh != nullptr && s.refresh_period_ms == 0) {
    return "refresh_period_ms is 0 but the plugin has a refresh() hook; set "
           "how often the host should call it";
  }
  if ((s.data & ~SCHEDPLUG_DATA_ALL) != 0) {
    char bits[32];
    std::snprintf(
        bits, sizeof bits, "0x%llx",
        static_cast<unsigned long long>(s.data & ~SCHEDPLUG_DATA_ALL));
    return std::string("data has bits ") + bits +
           " that are not SCHEDPLUG_DATA_* values";
  }
  if ((s.events & ~SCHEDPLUG_EVENT_ALL) != 0) {
    char bits[32];
    std::snprintf(
        bits, sizeof bits, "0x%llx",
        static_cast<unsigned long long>(s.events & ~SCHEDPLUG_EVENT_ALL));
    return std::string("events has bits ") + bits +
           " that are not SCHEDPLUG_EVENT_* values";
  }
  return {};
}

PluginInstance::PluginInstance(std::shared_ptr<const PluginLibrary> library)
    : library_(std::move(library)) {
  host_api_.struct_size = sizeof(schedplug_host);
  host_api_.context = this;
  host_api_.log = &host_log;
  ArgsSession::install(host_api_, nullptr);
  const auto& d = library_->descriptor();
  settings_.struct_size = sizeof(schedplug_settings);
  settings_.refresh_period_ms = d.refresh_period_ms;
  settings_.events = d.events;
  settings_.normalize_policy = d.normalize_policy;
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
        where + " failed to start: " +
        threw_message(self->name(), "create", std::current_exception()));
  }
  end_create();
  if (code != SCHEDPLUG_SUCCESS) {
    self->instance_ = nullptr;  // a failed create owns nothing we may free
    std::string message = error.str();
    if (message.empty()) message = "(the plugin gave no message)";
    throw CreateError(where + " rejected its args: " + message +
                      "; fix its pluginConfig args (given: " + args_json + ")");
  }
  self->settings_.struct_size = sizeof(schedplug_settings);
  self->settings_.reserved = 0;
  if (std::string problem = settings_problem(d, self->settings_);
      !problem.empty()) {
    // `self` is destroyed on the way out, which calls destroy().
    throw CreateError(where + " returned broken settings from create(): " +
                      problem + " (args given: " + args_json + ")");
  }
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
    const std::string text = reason.str();
    scope.error_ =
        code == SCHEDPLUG_ERROR
            ? "plugin " + name() + " failed to prepare the pod (pod_begin): " +
                  (text.empty() ? "(no reason given)" : text)
            : "plugin " + name() + " returned status code " +
                  std::to_string(code) +
                  " from pod_begin(); it may only return SUCCESS or ERROR";
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
  if (!is_known_code(code)) {
    return {SCHEDPLUG_ERROR,
            "plugin " + name() + " returned the unknown status code " +
                std::to_string(static_cast<int>(code)) + " from filter()"};
  }
  return {code, reason.str()};
}

ScoreResult PluginInstance::score(const schedplug_pod& pod,
                                  const schedplug_node& node) const {
  const auto& d = library_->descriptor();
  if (d.score == nullptr) {
    return {SCHEDPLUG_ERROR, 0,
            "plugin " + name() + " has no score() hook but was asked to score"};
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
  if (code == SCHEDPLUG_SUCCESS) return {SCHEDPLUG_SUCCESS, value, {}};
  if (code == SCHEDPLUG_ERROR) {
    std::string text = reason.str();
    return {SCHEDPLUG_ERROR, 0,
            "plugin " + name() + " failed to score node \"" +
                std::string(node.name.data == nullptr ? "" : node.name.data,
                            node.name.len) +
                "\": " + (text.empty() ? "(no reason given)" : text)};
  }
  return {SCHEDPLUG_ERROR, 0,
          "plugin " + name() + " returned status code " +
              std::to_string(static_cast<int>(code)) +
              " from score(); score may only return SUCCESS or ERROR"};
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
      std::string text = reason.str();
      return {SCHEDPLUG_ERROR, "plugin " + name() +
                                   " failed to normalize scores: " +
                                   (text.empty() ? "(no reason given)" : text)};
    }
  } else if (settings_.normalize_policy == SCHEDPLUG_NORMALIZE_LINEAR) {
    min_max(scores, /*reverse=*/false);
  } else if (settings_.normalize_policy == SCHEDPLUG_NORMALIZE_REVERSE) {
    min_max(scores, /*reverse=*/true);
  }

  // Never clamp: an out-of-range score is a plugin bug to surface, and
  // kube-scheduler would fail the cycle on it anyway.
  for (const auto& s : scores) {
    if (s.score < 0 || s.score > 100) {
      const std::string how =
          d.normalize_score != nullptr
              ? "after its normalize_score()"
              : "with normalize policy NONE (declare LINEAR or REVERSE, or "
                "implement normalize_score, to map raw values)";
      return {SCHEDPLUG_ERROR, "plugin " + name() + " gave node \"" +
                                   node_name_of(s) + "\" the score " +
                                   std::to_string(s.score) + " " + how +
                                   "; scores must be in [0, 100]"};
    }
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
  std::string text = reason.str();
  return {SCHEDPLUG_ERROR, "plugin " + name() + " refresh failed: " +
                               (text.empty() ? "(no reason given)" : text)};
}

}  // namespace schedplug::host
