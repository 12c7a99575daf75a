// schedplug C++ layer: write a plugin as a class, export it with one macro.
//
//   #include <schedplug/plugin.hpp>
//
//   class HwEncrypt {
//    public:
//     explicit HwEncrypt(const schedplug::Args& args);
//     bool Applies(const schedplug::Pod& pod) const;
//     schedplug::Status Filter(const schedplug::Pod& pod,
//                              const schedplug::Node& node) const;
//   };
//   SCHEDPLUG_PLUGIN(HwEncrypt, "HwEncrypt", "1.0.0")
//
// Header-only, on top of the C ABI in plugin.h; the only other dependency is
// nlohmann/json (header-only) for the args. The macro builds a static
// descriptor whose hooks are the member functions the class has (detected at
// compile time), and every exception that escapes the class becomes an ERROR
// status carrying the exception's message: nothing ever unwinds into the
// host.
//
// Hooks a class may have (all optional; the ones it lacks stay NULL):
//
//   T(const Args&, const Host&) / T(const Args&) / T()   construction
//   bool     Applies(const Pod&) const                   per-pod gate
//   Status   Filter(const Pod&, const Node&) const
//   Status   Score(const Pod&, const Node&, int64_t& score) const
//   Status   NormalizeScore(const Pod&, std::span<schedplug_node_score>) const
//   static constexpr schedplug_normalize_policy kNormalize   (with Score)
//   Status   Refresh()                                   background thread
//   static constexpr uint32_t kRefreshPeriodMs           (with Refresh)
//   static constexpr uint64_t kEvents                    SCHEDPLUG_EVENT_*
//
// Applies, Filter, Score and NormalizeScore run concurrently on one object,
// which is why they must be const. Refresh runs on one background thread at a
// time, concurrently with them: publish what it computes through
// schedplug::Published<T> (below) and read it from the const hooks.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "schedplug/plugin.h"

namespace schedplug {

// ---------------------------------------------------------------------------
// Views over the borrowed C structs. All of them are cheap to copy and valid
// only during the hook call that received them.
// ---------------------------------------------------------------------------

namespace detail {

inline std::string_view sv(schedplug_str s) {
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}

inline schedplug_str str(std::string_view s) { return {s.data(), s.size()}; }

// Binary search over a list sorted by `key_of` in byte order (plugin.h).
template <class Item, class KeyOf>
const Item* find_sorted(const Item* items, size_t count, std::string_view key,
                        KeyOf key_of) {
  const schedplug_str k = str(key);
  size_t lo = 0, hi = count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int c = schedplug_str_cmp(key_of(items[mid]), k);
    if (c == 0) return &items[mid];
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return nullptr;
}

}  // namespace detail

// Labels, annotations or a node selector: a sorted, read-only map.
class KeyValues {
 public:
  KeyValues() = default;
  explicit KeyValues(schedplug_kv_list list) : list_(list) {}

  // The value of `key` (exact, case-sensitive match), or nullopt.
  std::optional<std::string_view> get(std::string_view key) const {
    const schedplug_kv* kv =
        detail::find_sorted(list_.items, list_.count, key,
                            [](const schedplug_kv& e) { return e.key; });
    if (kv == nullptr) return std::nullopt;
    return detail::sv(kv->value);
  }
  bool contains(std::string_view key) const { return get(key).has_value(); }
  size_t size() const { return list_.count; }
  bool empty() const { return list_.count == 0; }

  struct Entry {
    std::string_view key;
    std::string_view value;
  };
  class iterator {
   public:
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(const schedplug_kv* p) : p_(p) {}
    Entry operator*() const {
      return {detail::sv(p_->key), detail::sv(p_->value)};
    }
    iterator& operator++() {
      ++p_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++p_;
      return old;
    }
    bool operator==(const iterator&) const = default;

   private:
    const schedplug_kv* p_ = nullptr;
  };
  iterator begin() const { return iterator(list_.items); }
  iterator end() const { return iterator(list_.items + list_.count); }

 private:
  schedplug_kv_list list_{};
};

// Resource quantities in canonical units (cpu in millicores, memory in
// bytes, pods as a count). An absent resource is 0.
class Resources {
 public:
  Resources() = default;
  explicit Resources(schedplug_resource_list list) : list_(list) {}

  int64_t get(std::string_view name) const {
    const schedplug_resource* r =
        detail::find_sorted(list_.items, list_.count, name,
                            [](const schedplug_resource& e) { return e.name; });
    return r == nullptr ? 0 : r->value;
  }
  size_t size() const { return list_.count; }
  std::span<const schedplug_resource> items() const {
    return {list_.items, list_.count};
  }

 private:
  schedplug_resource_list list_{};
};

struct Taint {
  std::string_view key;
  std::string_view value;
  std::string_view effect;  // "NoSchedule", "PreferNoSchedule", "NoExecute"
};

struct Toleration {
  std::string_view key;
  std::string_view op;  // "Equal" (also when empty) or "Exists"
  std::string_view value;
  std::string_view effect;  // empty matches every effect
  std::optional<int64_t> toleration_seconds;
};

// The pod being scheduled.
class Pod {
 public:
  explicit Pod(const schedplug_pod& pod) : p_(&pod) {}

  std::string_view namespace_name() const {
    return detail::sv(p_->namespace_name);
  }
  std::string_view name() const { return detail::sv(p_->name); }
  std::string_view uid() const { return detail::sv(p_->uid); }
  int32_t priority() const { return p_->priority; }

  std::optional<std::string_view> label(std::string_view key) const {
    return labels().get(key);
  }
  std::optional<std::string_view> annotation(std::string_view key) const {
    return annotations().get(key);
  }
  KeyValues labels() const { return KeyValues(p_->labels); }
  KeyValues annotations() const { return KeyValues(p_->annotations); }
  KeyValues node_selector() const { return KeyValues(p_->node_selector); }

  // The pod's effective request of `resource` (0 when it requests none).
  int64_t request(std::string_view resource) const {
    return requests().get(resource);
  }
  Resources requests() const { return Resources(p_->requests); }

  size_t toleration_count() const { return p_->toleration_count; }
  Toleration toleration(size_t i) const {
    const schedplug_toleration& t = p_->tolerations[i];
    Toleration out{detail::sv(t.key), detail::sv(t.op), detail::sv(t.value),
                   detail::sv(t.effect), std::nullopt};
    if (t.has_toleration_seconds != 0)
      out.toleration_seconds = t.toleration_seconds;
    return out;
  }

  const schedplug_pod& raw() const { return *p_; }

 private:
  const schedplug_pod* p_;
};

// One node of the scheduler's snapshot.
class Node {
 public:
  explicit Node(const schedplug_node& node) : n_(&node) {}

  std::string_view name() const { return detail::sv(n_->name); }

  std::optional<std::string_view> label(std::string_view key) const {
    return labels().get(key);
  }
  std::optional<std::string_view> annotation(std::string_view key) const {
    return annotations().get(key);
  }
  KeyValues labels() const { return KeyValues(n_->labels); }
  KeyValues annotations() const { return KeyValues(n_->annotations); }

  size_t taint_count() const { return n_->taint_count; }
  Taint taint(size_t i) const {
    const schedplug_taint& t = n_->taints[i];
    return {detail::sv(t.key), detail::sv(t.value), detail::sv(t.effect)};
  }

  int64_t allocatable(std::string_view resource) const {
    return Resources(n_->allocatable).get(resource);
  }
  // Sum of the requests of the pods already on the node.
  int64_t requested(std::string_view resource) const {
    return Resources(n_->requested).get(resource);
  }
  // allocatable - requested (may be negative on an overcommitted node).
  int64_t free(std::string_view resource) const {
    return allocatable(resource) - requested(resource);
  }
  Resources allocatable() const { return Resources(n_->allocatable); }
  Resources requested() const { return Resources(n_->requested); }
  uint32_t pod_count() const { return n_->pod_count; }

  const schedplug_node& raw() const { return *n_; }

 private:
  const schedplug_node* n_;
};

inline std::string_view node_name(const schedplug_node_score& s) {
  return detail::sv(s.node_name);
}

// ---------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------

// A rejection reason built once (usually in the constructor) and returned
// for many nodes. Status keeps a view of it instead of a copy, so rejecting
// a node allocates nothing. Keep it alive as long as the plugin: make it a
// member. (Passing a temporary Reason to Status is a compile error.)
class Reason {
 public:
  Reason() = default;
  explicit Reason(std::string text) : text_(std::move(text)) {}
  std::string_view view() const { return text_; }

 private:
  std::string text_;
};

// What a hook returns. A Filter reason is shown by kube-scheduler as
// "0/5 nodes are available: 3 <reason>.", so write a short phrase that
// starts with "node(s)": "node(s) lack hardware encryption".
class Status {
 public:
  static Status Success() { return Status(SCHEDPLUG_SUCCESS); }
  // The node does not fit now; preemption may help.
  static Status Unschedulable(std::string reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE, std::move(reason));
  }
  static Status Unschedulable(const Reason& reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE, reason.view());
  }
  static Status Unschedulable(const Reason&&) = delete;
  // The node does not fit and preempting pods cannot change that.
  static Status UnschedulableAndUnresolvable(std::string reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, std::move(reason));
  }
  static Status UnschedulableAndUnresolvable(const Reason& reason) {
    return Status(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, reason.view());
  }
  static Status UnschedulableAndUnresolvable(const Reason&&) = delete;
  // A real internal error. A Filter error aborts the pod's whole scheduling
  // cycle; never use it to reject a node.
  static Status Error(std::string message) {
    return Status(SCHEDPLUG_ERROR, std::move(message));
  }
  static Status Skip() { return Status(SCHEDPLUG_SKIP); }

  schedplug_code code() const { return code_; }
  std::string_view reason() const {
    return borrowed_.data() != nullptr ? borrowed_ : std::string_view(owned_);
  }
  bool ok() const { return code_ == SCHEDPLUG_SUCCESS; }

 private:
  explicit Status(schedplug_code code) : code_(code) {}
  Status(schedplug_code code, std::string reason)
      : code_(code), owned_(std::move(reason)) {}
  Status(schedplug_code code, std::string_view borrowed)
      : code_(code), borrowed_(borrowed.data() ? borrowed : "") {}
  schedplug_code code_;
  std::string owned_;          // a reason built for this call
  std::string_view borrowed_;  // or a view of a Reason the plugin keeps
};

// ---------------------------------------------------------------------------
// Args: the plugin's pluginConfig args, with typed getters whose errors name
// the arg. Every getter throws ArgsError; let it escape the constructor and
// the host refuses to start, showing the message.
// ---------------------------------------------------------------------------

class ArgsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // Parses `json`, which must be an object ("{}" when there are no args).
  static Args parse(std::string_view json) {
    nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded()) {
      throw ArgsError("args are not valid JSON: " +
                      std::string(json.substr(0, 120)));
    }
    if (!doc.is_object()) {
      throw ArgsError("args must be an object of named values, got " +
                      std::string(doc.type_name()));
    }
    return Args(std::move(doc));
  }

  explicit Args(nlohmann::json doc) : doc_(std::move(doc)) {}

  const nlohmann::json& json() const { return doc_; }
  bool has(std::string_view key) const { return doc_.contains(key); }
  bool empty() const { return doc_.empty(); }

  // Throws when an arg other than `known` is present, so a misspelt arg is an
  // error instead of a silently ignored setting.
  void allow_only(std::initializer_list<std::string_view> known) const {
    for (const auto& [key, value] : doc_.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      if (known.size() == 0) {
        throw ArgsError("unknown arg \"" + key +
                        "\"; this plugin takes no args");
      }
      std::string msg = "unknown arg \"" + key + "\"";
      for (std::string_view k : known) {
        if (equal_ignoring_case(k, key)) {
          msg += "; did you mean \"" + std::string(k) +
                 "\"? arg names are case-sensitive";
          throw ArgsError(msg);
        }
      }
      msg += "; known args: ";
      bool first = true;
      for (std::string_view k : known) {
        if (!first) msg += ", ";
        msg += k;
        first = false;
      }
      throw ArgsError(msg);
    }
  }

  // A non-empty string, or `fallback` when the arg is absent.
  std::string string(std::string_view key, std::string fallback) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
      throw ArgsError(describe(key, *v, "a non-empty string"));
    }
    return v->get<std::string>();
  }
  // A required non-empty string.
  std::string required_string(std::string_view key) const {
    if (find(key) == nullptr) {
      throw ArgsError("missing arg \"" + std::string(key) +
                      "\" (a non-empty string)");
    }
    return string(key, {});
  }
  // A number within [min, max], or `fallback` when absent.
  double number(std::string_view key, double fallback, double min,
                double max) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return fallback;
    const std::string want = "a number from " + fmt(min) + " to " + fmt(max);
    if (!v->is_number()) throw ArgsError(describe(key, *v, want));
    const double d = v->get<double>();
    if (!(d >= min && d <= max)) throw ArgsError(describe(key, *v, want));
    return d;
  }
  // An integer within [min, max], or `fallback` when absent.
  int64_t integer(std::string_view key, int64_t fallback, int64_t min,
                  int64_t max) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return fallback;
    const std::string want =
        "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (!v->is_number_integer()) throw ArgsError(describe(key, *v, want));
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      throw ArgsError(describe(key, *v, want));
    }
    const int64_t i = v->get<int64_t>();
    if (i < min || i > max) throw ArgsError(describe(key, *v, want));
    return i;
  }
  bool boolean(std::string_view key, bool fallback) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) throw ArgsError(describe(key, *v, "true or false"));
    return v->get<bool>();
  }

 private:
  const nlohmann::json* find(std::string_view key) const {
    auto it = doc_.find(key);
    return it == doc_.end() ? nullptr : &*it;
  }
  static std::string describe(std::string_view key, const nlohmann::json& v,
                              const std::string& want) {
    std::string got = v.dump();
    if (got.size() > 60) got = got.substr(0, 57) + "...";
    return "arg \"" + std::string(key) + "\" must be " + want + ", got " + got;
  }
  static std::string fmt(double d) {
    if (d == std::floor(d) && std::fabs(d) < 1e15) {
      return std::to_string(static_cast<long long>(d));
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, r.ptr);
  }
  static bool equal_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      auto lower = [](char c) {
        return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      };
      if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
  }

  nlohmann::json doc_;
};

// ---------------------------------------------------------------------------
// Host services
// ---------------------------------------------------------------------------

// The host's services for one plugin instance (its log). Copyable; valid for
// the instance's lifetime; safe from any thread.
class Host {
 public:
  Host() = default;
  explicit Host(const schedplug_host* host) : h_(host) {}

  void log(schedplug_log_level level, std::string_view msg) const {
    if (h_ == nullptr || h_->log == nullptr) return;
    h_->log(h_->context, level, detail::str(msg));
  }
  void error(std::string_view msg) const { log(SCHEDPLUG_LOG_ERROR, msg); }
  void warning(std::string_view msg) const { log(SCHEDPLUG_LOG_WARNING, msg); }
  void info(std::string_view msg) const { log(SCHEDPLUG_LOG_INFO, msg); }
  void debug(std::string_view msg) const { log(SCHEDPLUG_LOG_DEBUG, msg); }

 private:
  const schedplug_host* h_ = nullptr;
};

// ---------------------------------------------------------------------------
// Published<T>: what Refresh computes, read by the hot-path hooks.
// Refresh builds a new immutable T and publishes it; readers get a
// shared_ptr that keeps their snapshot alive even if a newer one is
// published meanwhile. The lock is held only to copy or swap the pointer;
// readers share it, so concurrent Score calls do not wait for each other.
//
// Not std::atomic<std::shared_ptr>: libstdc++ 12 releases its internal lock
// with a relaxed store after a load, which ThreadSanitizer reports
// as a race with the next store.
// ---------------------------------------------------------------------------

template <class T>
class Published {
 public:
  Published() = default;
  explicit Published(std::shared_ptr<const T> initial)
      : value_(std::move(initial)) {}

  std::shared_ptr<const T> load() const {
    std::shared_lock lock(mu_);
    return value_;
  }
  void publish(std::shared_ptr<const T> next) {
    {
      std::unique_lock lock(mu_);
      value_.swap(next);
    }
    // `next` now holds the old value: freed here, outside the lock, unless
    // a reader still uses it.
  }

 private:
  mutable std::shared_mutex mu_;
  std::shared_ptr<const T> value_;
};

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

template <class T>
struct Holder {
  Host host;
  T plugin;
};

inline void set_reason(schedplug_reason* out, std::string_view msg) {
  if (out == nullptr || out->text == nullptr || out->capacity == 0) return;
  const size_t n = std::min(msg.size(), out->capacity - 1);
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
schedplug_code create(const char* args_json, size_t args_len,
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
      holder = new Holder<T>{h, T(args, h)};
    } else if constexpr (std::is_constructible_v<T, const Args&>) {
      holder = new Holder<T>{h, T(args)};
    } else if constexpr (std::is_default_constructible_v<T>) {
      args.allow_only({});
      holder = new Holder<T>{h, T()};
    } else {
      static_assert(std::is_default_constructible_v<T>,
                    "a schedplug plugin class needs a constructor taking "
                    "(const schedplug::Args&, const schedplug::Host&), "
                    "(const schedplug::Args&) or nothing");
    }
    *instance_out = holder;
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
int applies(void* instance, const schedplug_pod* pod) noexcept {
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

template <class T>
schedplug_code filter(void* instance, const schedplug_pod* pod,
                      const schedplug_node* node,
                      schedplug_reason* reason) noexcept {
  return guarded("Filter", reason, [&] {
    const T& p = plugin_of<T>(instance);
    return report(p.Filter(Pod(*pod), Node(*node)), reason);
  });
}

template <class T>
schedplug_code score(void* instance, const schedplug_pod* pod,
                     const schedplug_node* node, int64_t* out,
                     schedplug_reason* reason) noexcept {
  return guarded("Score", reason, [&] {
    const T& p = plugin_of<T>(instance);
    int64_t value = 0;
    Status s = p.Score(Pod(*pod), Node(*node), value);
    *out = value;
    return report(s, reason);
  });
}

template <class T>
schedplug_code normalize_score(void* instance, const schedplug_pod* pod,
                               schedplug_node_score* scores, size_t count,
                               schedplug_reason* reason) noexcept {
  return guarded("NormalizeScore", reason, [&] {
    const T& p = plugin_of<T>(instance);
    return report(p.NormalizeScore(Pod(*pod), std::span<schedplug_node_score>(
                                                  scores, count)),
                  reason);
  });
}

template <class T>
schedplug_code refresh(void* instance, schedplug_reason* reason) noexcept {
  return guarded("Refresh", reason, [&] {
    return report(plugin_of<T>(instance).Refresh(), reason);
  });
}

template <class T>
constexpr schedplug_plugin make_descriptor(const char* name,
                                           const char* version) {
  static_assert(!NamesApplies<T> || HasApplies<T>,
                "Applies must be `bool Applies(const schedplug::Pod&) const` "
                "(const: it runs concurrently)");
  static_assert(
      !NamesFilter<T> || HasFilter<T>,
      "Filter must be `schedplug::Status Filter(const schedplug::Pod&, "
      "const schedplug::Node&) const` (const: it runs concurrently)");
  static_assert(
      !NamesScore<T> || HasScore<T>,
      "Score must be `schedplug::Status Score(const schedplug::Pod&, "
      "const schedplug::Node&, int64_t& score) const` (const: it runs "
      "concurrently)");
  static_assert(
      !NamesNormalizeScore<T> || HasNormalizeScore<T>,
      "NormalizeScore must be `schedplug::Status NormalizeScore(const "
      "schedplug::Pod&, std::span<schedplug_node_score>) const`");
  static_assert(!NamesRefresh<T> || HasRefresh<T>,
                "Refresh must be `schedplug::Status Refresh()`");
  static_assert(!HasNormalizeScore<T> || HasScore<T>,
                "NormalizeScore needs a Score hook");
  static_assert(!(HasNormalizeScore<T> && HasNormalizePolicy<T>),
                "declare either NormalizeScore or kNormalize, not both");
  static_assert(!HasNormalizePolicy<T> || HasScore<T>,
                "kNormalize needs a Score hook");
  static_assert(!HasRefresh<T> || HasRefreshPeriod<T>,
                "a plugin with Refresh must declare "
                "`static constexpr uint32_t kRefreshPeriodMs` (> 0)");

  schedplug_plugin d{};
  d.abi_version = SCHEDPLUG_ABI_VERSION;
  d.struct_size = sizeof(schedplug_plugin);
  d.name = name;
  d.version = version;
  d.create = &create<T>;
  d.destroy = &destroy<T>;
  if constexpr (HasApplies<T>) d.applies = &applies<T>;
  if constexpr (HasFilter<T>) d.filter = &filter<T>;
  if constexpr (HasScore<T>) d.score = &score<T>;
  if constexpr (HasNormalizeScore<T>) d.normalize_score = &normalize_score<T>;
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
