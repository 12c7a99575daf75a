// schedplug C++ layer, part "export": the SCHEDPLUG_PLUGIN macro and what
// it builds -- compile-time detection of a class's hooks, the C trampolines
// that call them (catching every exception), and the static descriptor.
// Included by <schedplug/plugin.hpp>; nothing here is called directly.
// Over 400 lines because the hook concepts, the trampolines and the descriptor
// builder must agree hook by hook, like one table read across.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "schedplug/cpp/args.hpp"
#include "schedplug/cpp/host.hpp"
#include "schedplug/cpp/pod_patch.hpp"
#include "schedplug/cpp/status.hpp"
#include "schedplug/cpp/views.hpp"
#include "schedplug/plugin.h"

namespace schedplug {

// ---------------------------------------------------------------------------
// The descriptor and its trampolines (implementation details).
// ---------------------------------------------------------------------------

namespace detail {

// Compile-time detection of the hooks. `const T&` on purpose: a hook that
// may run concurrently must not mutate the plugin.
template <class T>
concept HasApplies = requires(const T& t, const Pod& p) {
  { t.Applies(p) } -> std::convertible_to<bool>;
};
template <class T>
concept HasFilter = requires(const T& t, const Pod& p, const Node& n) {
  { t.Filter(p, n) } -> std::same_as<Status>;
};
template <class T>
concept HasScore = requires(const T& t, const Pod& p, const Node& n,
                            int64_t& s) {
  { t.Score(p, n, s) } -> std::same_as<Status>;
};
template <class T>
concept HasNormalizeScore = requires(const T& t, const Pod& p,
                                     std::span<schedplug_node_score> s) {
  { t.NormalizeScore(p, s) } -> std::same_as<Status>;
};
template <class T>
concept HasRefresh = requires(T& t) {
  { t.Refresh() } -> std::same_as<Status>;
};
template <class T>
concept HasNormalizePolicy = requires {
  { T::kNormalize } -> std::convertible_to<schedplug_normalize_policy>;
};
template <class T>
concept HasRefreshPeriod = requires {
  { T::kRefreshPeriodMs } -> std::convertible_to<uint32_t>;
};
template <class T>
concept HasEvents = requires {
  { T::kEvents } -> std::convertible_to<uint64_t>;
};
template <class T>
concept HasData = requires {
  { T::kData } -> std::convertible_to<uint64_t>;
};
template <class T>
concept HasHints = requires {
  { T::kHints } -> std::convertible_to<uint64_t>;
};
template <class T>
concept HasPodLabelKeys = requires(const T& t) {
  { t.PodLabelKeys() } -> std::convertible_to<std::vector<std::string>>;
};
template <class T>
concept HasPodAnnotationKeys = requires(const T& t) {
  { t.PodAnnotationKeys() } -> std::convertible_to<std::vector<std::string>>;
};
template <class T>
concept HasConfigure = requires(const T& t, Settings& s) {
  { t.Configure(s) } -> std::same_as<void>;
};
template <class T>
concept HasPodState = requires {
  typename T::PodState;
};
template <class T>
concept HasBeginPod = HasPodState<T> &&
    requires(const T& t, const Pod& p, typename T::PodState& s, Gates& g) {
  { t.BeginPod(p, s, g) } -> std::same_as<Status>;
};
template <class T>
concept HasStateFilter = HasPodState<T> &&
    requires(const T& t, const Pod& p, const Node& n,
             const typename T::PodState& s) {
  { t.Filter(p, n, s) } -> std::same_as<Status>;
};
template <class T>
concept HasStateScore = HasPodState<T> &&
    requires(const T& t, const Pod& p, const Node& n,
             const typename T::PodState& s, int64_t& v) {
  { t.Score(p, n, s, v) } -> std::same_as<Status>;
};

// The hooks of plugins that own a resource (ABI v1.6) change the plugin's
// own state (reservations), so they may be non-const: `T&` accepts both.
template <class T>
concept HasReserve = requires(T& t, const Pod& p, const Node& n) {
  { t.Reserve(p, n) } -> std::same_as<Status>;
};
template <class T>
concept HasUnreserve = requires(T& t, const Pod& p, const Node& n) {
  { t.Unreserve(p, n) } -> std::same_as<void>;
};
template <class T>
concept HasPermit = requires(T& t, const Pod& p, const Node& n) {
  { t.Permit(p, n) } -> std::same_as<Status>;
};
template <class T>
concept HasPreBind = requires(T& t, const Pod& p, const Node& n,
                              PodPatch& patch) {
  { t.PreBind(p, n, patch) } -> std::same_as<Status>;
};
template <class T>
concept HasPreEnqueue = requires(T& t, const Pod& p) {
  { t.PreEnqueue(p) } -> std::same_as<Status>;
};

// A member with a hook's name but not its signature would silently leave the
// hook out; these catch that at compile time.
template <class T>
concept NamesApplies = requires {
  &T::Applies;
};
template <class T>
concept NamesFilter = requires {
  &T::Filter;
};
template <class T>
concept NamesScore = requires {
  &T::Score;
};
template <class T>
concept NamesNormalizeScore = requires {
  &T::NormalizeScore;
};
template <class T>
concept NamesRefresh = requires {
  &T::Refresh;
};
template <class T>
concept NamesBeginPod = requires {
  &T::BeginPod;
};
template <class T>
concept NamesPodLabelKeys = requires {
  &T::PodLabelKeys;
};
template <class T>
concept NamesPodAnnotationKeys = requires {
  &T::PodAnnotationKeys;
};
template <class T>
concept NamesReserve = requires {
  &T::Reserve;
};
template <class T>
concept NamesUnreserve = requires {
  &T::Unreserve;
};
template <class T>
concept NamesPermit = requires {
  &T::Permit;
};
template <class T>
concept NamesPreBind = requires {
  &T::PreBind;
};
template <class T>
concept NamesPreEnqueue = requires {
  &T::PreEnqueue;
};

constexpr bool is_upper_camel_case(const char* s) {
  if (s == nullptr || !(s[0] >= 'A' && s[0] <= 'Z')) return false;
  for (const char* p = s; *p != '\0'; ++p) {
    const char c = *p;
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9'))) {
      return false;
    }
  }
  return true;
}

// The pod label and annotation keys an instance declared (PodLabelKeys,
// PodAnnotationKeys; plugin.h v1.4), kept for the host, which copies them
// after create() returns.
struct DeclaredPodKeys {
  std::vector<std::string> labels, annotations;
  std::vector<schedplug_str> label_views, annotation_views;
};

template <class T>
struct Holder {
  Host host;
  T plugin;
  DeclaredPodKeys keys;
};

// Points `s`'s key arrays at `keys` (views kept in `keys` too).
inline void declare_pod_keys(schedplug_settings& s, DeclaredPodKeys& keys) {
  const auto views = [](const std::vector<std::string>& in) {
    std::vector<schedplug_str> out;
    out.reserve(in.size());
    for (const std::string& k : in) out.push_back({k.data(), k.size()});
    return out;
  };
  keys.label_views = views(keys.labels);
  keys.annotation_views = views(keys.annotations);
  s.pod_label_keys = keys.label_views.data();
  s.pod_label_key_count = keys.label_views.size();
  s.pod_annotation_keys = keys.annotation_views.data();
  s.pod_annotation_key_count = keys.annotation_views.size();
}

inline void set_reason(schedplug_reason* out, std::string_view msg) {
  if (out == nullptr || out->text == nullptr || out->capacity == 0) return;
  const size_t n =
      schedplug_utf8_prefix(msg.data(), msg.size(), out->capacity - 1);
  if (n > 0) std::memcpy(out->text, msg.data(), n);
  out->text[n] = '\0';
}

inline schedplug_code report(const Status& s, schedplug_reason* reason) {
  if (!s.reason().empty()) set_reason(reason, s.reason());
  return s.code();
}

// Runs `body` and turns any exception into ERROR with its message.
template <class Body>
schedplug_code guarded(const char* hook, schedplug_reason* reason,
                       Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    try {
      set_reason(reason, std::string("exception in ") + hook + ": " + e.what());
    } catch (...) {
      set_reason(reason, "exception in hook (out of memory formatting it)");
    }
  } catch (...) {
    try {
      set_reason(reason, std::string("unknown exception in ") + hook);
    } catch (...) {
      set_reason(reason, "unknown exception");
    }
  }
  return SCHEDPLUG_ERROR;
}

template <class T>
T& plugin_of(void* instance) {
  return static_cast<Holder<T>*>(instance)->plugin;
}

template <class T>
schedplug_code create(const char* args_json, uint64_t args_len,
                      const schedplug_host* host, void** instance_out,
                      schedplug_reason* error) noexcept {
  *instance_out = nullptr;
  try {
    const std::string_view text = args_json == nullptr
                                      ? std::string_view{"{}"}
                                      : std::string_view{args_json, args_len};
    Args args = Args::parse(text.empty() ? std::string_view{"{}"} : text);
    Host h(host);
    Holder<T>* holder = nullptr;
    if constexpr (std::is_constructible_v<T, const Args&, const Host&>) {
      holder = new Holder<T>{h, T(args, h), {}};
    } else if constexpr (std::is_constructible_v<T, const Args&>) {
      holder = new Holder<T>{h, T(args), {}};
    } else if constexpr (std::is_default_constructible_v<T>) {
      args.allow_only({});
      holder = new Holder<T>{h, T(), {}};
    } else {
      static_assert(std::is_default_constructible_v<T>,
                    "a schedplug plugin class needs a constructor taking "
                    "(const schedplug::Args&, const schedplug::Host&), "
                    "(const schedplug::Args&) or nothing");
    }
    *instance_out = holder;
    const bool has_settings =
        host != nullptr &&
        SCHEDPLUG_HAS_FIELD(host, schedplug_host, settings) &&
        host->settings != nullptr;
    const bool has_data =
        has_settings &&
        SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, data);
    if constexpr (HasData<T>) {
      if (!has_data) {
        delete holder;
        *instance_out = nullptr;
        throw std::runtime_error(
            "this plugin reads pod or node data (kData) that this host "
            "cannot send (it predates ABI v1.2); update schedplug-host");
      }
      host->settings->data |= T::kData;
    }
    // Hints are promises a host may use; one that predates them does not.
    const bool has_hints =
        has_settings &&
        SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings, hints);
    if constexpr (HasHints<T>) {
      if (has_hints) host->settings->hints |= T::kHints;
    }
    if constexpr (HasConfigure<T>) {
      if (has_settings) {
        Settings settings{host->settings->refresh_period_ms,
                          host->settings->events,
                          host->settings->normalize_policy,
                          has_data ? host->settings->data : 0,
                          has_hints ? host->settings->hints : 0};
        try {
          static_cast<const T&>(holder->plugin).Configure(settings);
        } catch (...) {
          delete holder;
          *instance_out = nullptr;
          throw;
        }
        host->settings->refresh_period_ms = settings.refresh_period_ms;
        host->settings->events = settings.events;
        host->settings->normalize_policy = settings.normalize;
        if (has_data) host->settings->data = settings.data;
        if (has_hints) host->settings->hints = settings.hints;
      }
    }
    // The keys that go with SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
    // (ABI v1.4). A host without the fields predates the hint too: it
    // refuses the bit, or (older than v1.3) uses no hints at all.
    if constexpr (HasPodLabelKeys<T> || HasPodAnnotationKeys<T>) {
      if (has_settings &&
          SCHEDPLUG_HAS_FIELD(host->settings, schedplug_settings,
                              pod_annotation_key_count)) {
        try {
          const T& p = holder->plugin;
          if constexpr (HasPodLabelKeys<T>) {
            holder->keys.labels = p.PodLabelKeys();
          }
          if constexpr (HasPodAnnotationKeys<T>) {
            holder->keys.annotations = p.PodAnnotationKeys();
          }
        } catch (...) {
          delete holder;
          *instance_out = nullptr;
          throw;
        }
        declare_pod_keys(*host->settings, holder->keys);
      }
    }
    return SCHEDPLUG_SUCCESS;
  } catch (const std::exception& e) {
    set_reason(error, e.what());
  } catch (...) {
    set_reason(error, "unknown exception while creating the plugin");
  }
  return SCHEDPLUG_ERROR;
}

template <class T>
void destroy(void* instance) noexcept {
  // A destructor that throws would terminate anyway; nothing to report to.
  delete static_cast<Holder<T>*>(instance);
}

template <class T>
int32_t applies(void* instance, const schedplug_pod* pod) noexcept {
  const Holder<T>& h = *static_cast<const Holder<T>*>(instance);
  try {
    return static_cast<const T&>(h.plugin).Applies(Pod(*pod)) ? 1 : 0;
  } catch (const std::exception& e) {
    // applies has no status to carry the error; run the pod through Filter
    // and Score, which report their own errors.
    try {
      h.host.error(
          std::string(
              "exception in Applies, treating the pod as applicable: ") +
          e.what());
    } catch (...) {
    }
  } catch (...) {
    h.host.error(
        "unknown exception in Applies, treating the pod as applicable");
  }
  return 1;
}

// The pod state pod_begin built, or NULL (no state on this host).
template <class T>
const typename T::PodState* state_of(const schedplug_pod* pod) {
  if (!SCHEDPLUG_HAS_FIELD(pod, schedplug_pod, state)) return nullptr;
  return static_cast<const typename T::PodState*>(pod->state);
}

// Runs `body(state)` with the pod's state; builds one for this call when
// the host has none (a host older than ABI v1.1 never calls pod_begin).
// `gate` picks the gate that decides whether the hook applies.
template <class T, class Body>
Status with_state(const T& p, const schedplug_pod* pod, bool Gates::*gate,
                  Body&& body) {
  if (const auto* state = state_of<T>(pod)) return body(*state);
  typename T::PodState local{};
  Gates gates;
  Status begun = p.BeginPod(Pod(*pod), local, gates);
  if (begun.code() == SCHEDPLUG_SKIP) return Status::Success();
  if (!begun.ok()) return begun;
  if (!(gates.*gate)) return Status::Success();
  return body(static_cast<const typename T::PodState&>(local));
}

template <class T>
schedplug_code filter(void* instance, const schedplug_pod* pod,
                      const schedplug_node* node,
                      schedplug_reason* reason) noexcept {
  return guarded("Filter", reason, [&] {
    const T& p = plugin_of<T>(instance);
    if constexpr (HasStateFilter<T>) {
      return report(with_state(p, pod, &Gates::filter,
                               [&](const typename T::PodState& state) {
                                 return p.Filter(Pod(*pod), Node(*node), state);
                               }),
                    reason);
    } else {
      return report(p.Filter(Pod(*pod), Node(*node)), reason);
    }
  });
}

template <class T>
schedplug_code score(void* instance, const schedplug_pod* pod,
                     const schedplug_node* node, int64_t* out,
                     schedplug_reason* reason) noexcept {
  return guarded("Score", reason, [&] {
    const T& p = plugin_of<T>(instance);
    int64_t value = 0;
    Status s = Status::Success();
    if constexpr (HasStateScore<T>) {
      s = with_state(p, pod, &Gates::score,
                     [&](const typename T::PodState& state) {
                       return p.Score(Pod(*pod), Node(*node), state, value);
                     });
    } else {
      s = p.Score(Pod(*pod), Node(*node), value);
    }
    *out = value;
    return report(s, reason);
  });
}

template <class T>
schedplug_code pod_begin(void* instance, const schedplug_pod* pod,
                         schedplug_pod_begin_result* out,
                         schedplug_reason* reason) noexcept {
  return guarded("BeginPod", reason, [&] {
    const T& p = plugin_of<T>(instance);
    auto state = std::make_unique<typename T::PodState>();
    Gates gates;
    Status s = p.BeginPod(Pod(*pod), *state, gates);
    if (s.code() == SCHEDPLUG_SKIP) {  // Skip: neither hook runs
      out->skip = SCHEDPLUG_SKIP_FILTER | SCHEDPLUG_SKIP_SCORE;
      return static_cast<schedplug_code>(SCHEDPLUG_SUCCESS);
    }
    if (!s.ok()) return report(s, reason);
    out->skip = (gates.filter ? 0u : SCHEDPLUG_SKIP_FILTER) |
                (gates.score ? 0u : SCHEDPLUG_SKIP_SCORE);
    out->state = state.release();
    return SCHEDPLUG_SUCCESS;
  });
}

template <class T>
void pod_end(void* /*instance*/, void* state) noexcept {
  delete static_cast<typename T::PodState*>(state);
}

// For hosts older than ABI v1.1, which call applies() instead of
// pod_begin(): the pod applies when either gate is open.
template <class T>
int32_t applies_from_begin(void* instance, const schedplug_pod* pod) noexcept {
  const Holder<T>& h = *static_cast<const Holder<T>*>(instance);
  try {
    typename T::PodState state{};
    Gates gates;
    Status s =
        static_cast<const T&>(h.plugin).BeginPod(Pod(*pod), state, gates);
    if (s.code() == SCHEDPLUG_SKIP) return 0;
    if (!s.ok()) return 1;  // Filter / Score report the error themselves
    // Only the gates of hooks the class has count.
    const bool filters = (HasFilter<T> || HasStateFilter<T>)&&gates.filter;
    const bool scores = (HasScore<T> || HasStateScore<T>)&&gates.score;
    return filters || scores ? 1 : 0;
  } catch (...) {
    return 1;
  }
}

template <class T>
schedplug_code normalize_score(void* instance, const schedplug_pod* pod,
                               schedplug_node_score* scores, uint64_t count,
                               schedplug_reason* reason) noexcept {
  return guarded("NormalizeScore", reason, [&] {
    const T& p = plugin_of<T>(instance);
    const uint64_t stride = schedplug_pod_node_score_size(pod);
    if (stride == sizeof(schedplug_node_score)) {
      return report(p.NormalizeScore(Pod(*pod), std::span<schedplug_node_score>(
                                                    scores, count)),
                    reason);
    }
    // A host with larger entries: normalize a packed copy, write it back.
    std::vector<schedplug_node_score> packed(count);
    for (uint64_t i = 0; i < count; ++i) {
      packed[i] = *schedplug_node_score_at(pod, scores, i);
    }
    const schedplug_code code = report(
        p.NormalizeScore(Pod(*pod), std::span<schedplug_node_score>(packed)),
        reason);
    for (uint64_t i = 0; i < count; ++i) {
      schedplug_node_score_at(pod, scores, i)->score = packed[i].score;
    }
    return code;
  });
}

template <class T>
schedplug_code refresh(void* instance, schedplug_reason* reason) noexcept {
  return guarded("Refresh", reason, [&] {
    return report(plugin_of<T>(instance).Refresh(), reason);
  });
}

template <class T>
schedplug_code reserve(void* instance, const schedplug_pod* pod,
                       const schedplug_node* node,
                       schedplug_reason* reason) noexcept {
  return guarded("Reserve", reason, [&] {
    return report(plugin_of<T>(instance).Reserve(Pod(*pod), Node(*node)),
                  reason);
  });
}

// unreserve cannot fail: an exception is logged and swallowed.
template <class T>
void unreserve(void* instance, const schedplug_pod* pod,
               const schedplug_node* node) noexcept {
  Holder<T>& h = *static_cast<Holder<T>*>(instance);
  const auto where = [&] {
    return "exception in Unreserve of pod " +
           std::string(detail::sv(pod->namespace_name)) + "/" +
           std::string(detail::sv(pod->name)) + " on node " +
           std::string(detail::sv(node->name)) +
           " (ignored: Unreserve cannot "
           "fail; release what Reserve took without throwing)";
  };
  try {
    h.plugin.Unreserve(Pod(*pod), Node(*node));
  } catch (const std::exception& e) {
    try {
      h.host.error(where() + ": " + e.what());
    } catch (...) {
    }
  } catch (...) {
    try {
      h.host.error("unknown " + where());
    } catch (...) {
    }
  }
}

template <class T>
schedplug_code permit(void* instance, const schedplug_pod* pod,
                      const schedplug_node* node, schedplug_permit_result* out,
                      schedplug_reason* reason) noexcept {
  return guarded("Permit", reason, [&] {
    const Status s = plugin_of<T>(instance).Permit(Pod(*pod), Node(*node));
    if (s.code() == SCHEDPLUG_WAIT) {
      const auto ms = s.timeout().count();
      if (ms < 1 ||
          ms > static_cast<int64_t>(SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS)) {
        return report(
            Status::Error("Permit returned Status::Wait(" + std::to_string(ms) +
                          "ms); the timeout must be from 1 ms to " +
                          std::to_string(SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS) +
                          " ms (15 minutes, kube-scheduler's limit)"),
            reason);
      }
      if (out != nullptr) out->timeout_ms = static_cast<uint64_t>(ms);
    }
    return report(s, reason);
  });
}

template <class T>
schedplug_code pre_bind(void* instance, const schedplug_pod* pod,
                        const schedplug_node* node, schedplug_pod_patch* patch,
                        schedplug_reason* reason) noexcept {
  return guarded("PreBind", reason, [&] {
    PodPatch p(patch);
    return report(plugin_of<T>(instance).PreBind(Pod(*pod), Node(*node), p),
                  reason);
  });
}

template <class T>
schedplug_code pre_enqueue(void* instance, const schedplug_pod* pod,
                           schedplug_reason* reason) noexcept {
  return guarded("PreEnqueue", reason, [&] {
    return report(plugin_of<T>(instance).PreEnqueue(Pod(*pod)), reason);
  });
}

// The class's kHints, 0 without.
template <class T>
constexpr uint64_t static_hints() {
  if constexpr (HasHints<T>) {
    return T::kHints;
  } else {
    return 0;
  }
}

template <class T>
constexpr schedplug_plugin make_descriptor(const char* name,
                                           const char* version) {
  static_assert(!NamesApplies<T> || HasApplies<T>,
                "Applies must be `bool Applies(const schedplug::Pod&) const` "
                "(const: it runs concurrently)");
  static_assert(
      !NamesFilter<T> || HasFilter<T> || HasStateFilter<T>,
      "Filter must be `schedplug::Status Filter(const schedplug::Pod&, "
      "const schedplug::Node&) const` (const: it runs concurrently)");
  static_assert(
      !NamesScore<T> || HasScore<T> || HasStateScore<T>,
      "Score must be `schedplug::Status Score(const schedplug::Pod&, "
      "const schedplug::Node&, int64_t& score) const` (const: it runs "
      "concurrently)");
  static_assert(
      !NamesNormalizeScore<T> || HasNormalizeScore<T>,
      "NormalizeScore must be `schedplug::Status NormalizeScore(const "
      "schedplug::Pod&, std::span<schedplug_node_score>) const`");
  static_assert(!NamesRefresh<T> || HasRefresh<T>,
                "Refresh must be `schedplug::Status Refresh()`");
  static_assert(!NamesBeginPod<T> || HasBeginPod<T>,
                "BeginPod must be `schedplug::Status BeginPod(const "
                "schedplug::Pod&, PodState& state, schedplug::Gates& gates) "
                "const` with a type PodState declared in the class");
  static_assert(!(HasBeginPod<T> && HasApplies<T>),
                "declare either BeginPod (it gates too) or Applies, not both");
  static_assert(!HasPodState<T> || HasBeginPod<T>,
                "a class with a PodState type needs BeginPod to build it");
  static_assert(!NamesPodLabelKeys<T> || HasPodLabelKeys<T>,
                "PodLabelKeys must be `std::vector<std::string> "
                "PodLabelKeys() const`");
  static_assert(!NamesPodAnnotationKeys<T> || HasPodAnnotationKeys<T>,
                "PodAnnotationKeys must be `std::vector<std::string> "
                "PodAnnotationKeys() const`");
  static_assert(!HasNormalizeScore<T> || HasScore<T> || HasStateScore<T>,
                "NormalizeScore needs a Score hook");
  static_assert(!(HasNormalizeScore<T> && HasNormalizePolicy<T>),
                "declare either NormalizeScore or kNormalize, not both");
  static_assert(!HasNormalizePolicy<T> || HasScore<T> || HasStateScore<T>,
                "kNormalize needs a Score hook");
  static_assert(!HasRefresh<T> || HasRefreshPeriod<T>,
                "a plugin with Refresh must declare "
                "`static constexpr uint32_t kRefreshPeriodMs` (> 0)");

  static_assert(!NamesReserve<T> || HasReserve<T>,
                "Reserve must be `schedplug::Status Reserve(const "
                "schedplug::Pod&, const schedplug::Node&)`");
  static_assert(!NamesUnreserve<T> || HasUnreserve<T>,
                "Unreserve must be `void Unreserve(const schedplug::Pod&, "
                "const schedplug::Node&)`");
  static_assert(!NamesPermit<T> || HasPermit<T>,
                "Permit must be `schedplug::Status Permit(const "
                "schedplug::Pod&, const schedplug::Node&)`");
  static_assert(!NamesPreBind<T> || HasPreBind<T>,
                "PreBind must be `schedplug::Status PreBind(const "
                "schedplug::Pod&, const schedplug::Node&, "
                "schedplug::PodPatch& patch)`");
  static_assert(!NamesPreEnqueue<T> || HasPreEnqueue<T>,
                "PreEnqueue must be `schedplug::Status PreEnqueue(const "
                "schedplug::Pod&)`");
  static_assert(!HasUnreserve<T> || HasReserve<T> || HasPermit<T>,
                "Unreserve undoes what Reserve or Permit did; add Reserve "
                "(or Permit), or remove Unreserve");

  schedplug_plugin d{};
  d.abi_version = SCHEDPLUG_ABI_VERSION;
  d.struct_size = sizeof(schedplug_plugin);
  d.name = name;
  d.version = version;
  d.create = &create<T>;
  d.destroy = &destroy<T>;
  if constexpr (HasApplies<T>) d.applies = &applies<T>;
  if constexpr (HasBeginPod<T>) {
    d.applies = &applies_from_begin<T>;
    d.pod_begin = &pod_begin<T>;
    d.pod_end = &pod_end<T>;
  }
  if constexpr (HasFilter<T> || HasStateFilter<T>) d.filter = &filter<T>;
  if constexpr (HasScore<T> || HasStateScore<T>) d.score = &score<T>;
  if constexpr (HasNormalizeScore<T>) d.normalize_score = &normalize_score<T>;
  if constexpr (HasReserve<T>) d.reserve = &reserve<T>;
  if constexpr (HasUnreserve<T>) d.unreserve = &unreserve<T>;
  if constexpr (HasPermit<T>) d.permit = &permit<T>;
  if constexpr (HasPreBind<T>) d.pre_bind = &pre_bind<T>;
  if constexpr (HasPreEnqueue<T>) d.pre_enqueue = &pre_enqueue<T>;
  if constexpr (HasNormalizePolicy<T>) {
    d.normalize_policy = T::kNormalize;
  } else {
    d.normalize_policy = SCHEDPLUG_NORMALIZE_NONE;
  }
  if constexpr (HasRefresh<T>) {
    static_assert(T::kRefreshPeriodMs > 0, "kRefreshPeriodMs must be > 0");
    d.refresh = &refresh<T>;
    d.refresh_period_ms = T::kRefreshPeriodMs;
  }
  if constexpr (HasEvents<T>) {
    static_assert((T::kEvents & ~SCHEDPLUG_EVENT_ALL) == 0,
                  "kEvents may only contain SCHEDPLUG_EVENT_* bits");
    d.events = T::kEvents;
  }
  if constexpr (HasData<T>) {
    static_assert((T::kData & ~SCHEDPLUG_DATA_ALL) == 0,
                  "kData may only contain SCHEDPLUG_DATA_* bits");
  }
  if constexpr (HasHints<T>) {
    static_assert((T::kHints & ~SCHEDPLUG_HINT_ALL) == 0,
                  "kHints may only contain SCHEDPLUG_HINT_* bits");
    static_assert(
        !HasRefresh<T> ||
            (T::kHints & SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) == 0,
        "kHints has SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, which a "
        "plugin with Refresh cannot keep; drop the hint or Refresh");
    static_assert(
        !HasRefresh<T> ||
            (T::kHints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) == 0,
        "kHints has SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, which a "
        "plugin with Refresh cannot keep; drop the hint or Refresh");
    static_assert(
        HasScore<T> || HasStateScore<T> ||
            (T::kHints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) == 0,
        "kHints has SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a promise "
        "about Score, but the class has no Score; drop the hint or add Score");
  }
  // Declared keys go with the hint (the host refuses them without it);
  // a class with Configure may set the hint there.
  static_assert(
      !(HasPodLabelKeys<T> || HasPodAnnotationKeys<T>) || HasConfigure<T> ||
          (static_hints<T>() & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS) !=
              0,
      "PodLabelKeys / PodAnnotationKeys declare the keys of "
      "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS; add the hint to kHints");
  return d;
}

}  // namespace detail

}  // namespace schedplug

// Exports `Class` as the plugin `Name` (UpperCamelCase, the name profiles
// enable) at `Version`. Use once per shared object, at namespace scope.
#define SCHEDPLUG_PLUGIN(Class, Name, Version)                             \
  static_assert(                                                           \
      ::schedplug::detail::is_upper_camel_case(Name),                      \
      "plugin name must be UpperCamelCase ([A-Z][A-Za-z0-9]*), e.g. "      \
      "\"HwEncrypt\"");                                                    \
  extern "C" SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1( \
      void) {                                                              \
    static constexpr schedplug_plugin kDescriptor =                        \
        ::schedplug::detail::make_descriptor<Class>(Name, Version);        \
    return &kDescriptor;                                                   \
  }
