// schedplug C++ layer, part "args": a plugin's pluginConfig args with typed
// getters whose errors name the arg (with its path in nested objects) and
// suggest the closest known key. Included by <schedplug/plugin.hpp>.
//
// schedplug-host reads args for C plugins (plugin.h's arg_* functions) with
// this same class, so both languages follow the same rules and messages.
//
// Every getter throws ArgsError; let it escape the plugin's constructor and
// the host refuses to start, showing the message.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedplug {

class ArgsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

// Edit distance, byte-wise: insertions, deletions, substitutions and
// swaps of two adjacent bytes ("nmae" -> "name" is 1), each costing 1.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t best =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                    d[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = best;
    }
  }
  return d[a.size() * w + b.size()];
}

// The known key `typed` most likely meant: one differing only in case,
// else the nearest within max(1, length / 4) edits; empty when none is close.
inline std::string_view closest_key(std::string_view typed,
                                    std::span<const std::string_view> known) {
  for (std::string_view k : known) {
    if (equal_ignoring_case(k, typed)) return k;
  }
  const size_t limit = std::max<size_t>(1, typed.size() / 4);
  std::string_view best;
  size_t best_distance = limit + 1;
  for (std::string_view k : known) {
    const size_t d = edit_distance(typed, k);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

inline constexpr int64_t kNanosPerUnit[] = {
    1,         1'000,         1'000,          1'000,
    1'000'000, 1'000'000'000, 60'000'000'000, 3'600'000'000'000};
inline constexpr std::string_view kUnitNames[] = {"ns", "us", "µs", "μs",
                                                  "ms", "s",  "m",  "h"};

// Parses a duration as Go's time.ParseDuration does (what Kubernetes'
// metav1.Duration uses): one or more <decimal><unit>, e.g. "1m30s",
// "1.5h", "250ms". nullopt when malformed, negative or out of range.
inline std::optional<int64_t> parse_duration_ns(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  if (s == "0") return 0;
  long double total = 0;
  bool any = false;
  while (!s.empty()) {
    size_t i = 0;
    long double value = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + (s[i] - '0');
      digits = true;
      ++i;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      long double scale = 0.1L;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value += scale * (s[i] - '0');
        scale /= 10;
        digits = true;
        ++i;
      }
    }
    if (!digits) return std::nullopt;
    s.remove_prefix(i);
    size_t unit_len = 0;
    while (unit_len < s.size() && !(s[unit_len] >= '0' && s[unit_len] <= '9') &&
           s[unit_len] != '.') {
      ++unit_len;
    }
    const std::string_view unit = s.substr(0, unit_len);
    s.remove_prefix(unit_len);
    bool found = false;
    for (size_t u = 0; u < std::size(kUnitNames); ++u) {
      if (unit == kUnitNames[u]) {
        total += value * kNanosPerUnit[u];
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
    any = true;
  }
  if (!any || total > static_cast<long double>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(std::llroundl(total));
}

}  // namespace detail

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

  // `path` is where this object sits in the args ("" for the root,
  // "limits" for a nested object), used to name args in errors.
  explicit Args(nlohmann::json doc, std::string path = {})
      : doc_(std::move(doc)), path_(std::move(path)) {}

  const nlohmann::json& json() const { return doc_; }
  bool has(std::string_view key) const { return doc_.contains(key); }
  bool empty() const { return doc_.empty(); }
  // The full name of `key` in errors: "key", or "outer.key" when nested.
  std::string name_of(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  // Throws when an arg other than `known` is present, naming it and the
  // closest known key, so a misspelt arg is an error instead of a silently
  // ignored setting.
  void allow_only(std::initializer_list<std::string_view> known) const {
    allow_only(std::span<const std::string_view>(known.begin(), known.size()));
  }
  void allow_only(std::span<const std::string_view> known) const {
    for (const auto& [key, value] : doc_.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      if (known.empty()) {
        throw ArgsError("unknown arg \"" + name_of(key) +
                        "\"; this plugin takes no args" +
                        (path_.empty() ? "" : " under \"" + path_ + "\""));
      }
      std::string msg = "unknown arg \"" + name_of(key) + "\"";
      const std::string_view close = detail::closest_key(key, known);
      if (!close.empty()) {
        msg += "; did you mean \"" + name_of(close) + "\"?";
        if (detail::equal_ignoring_case(close, key)) {
          throw ArgsError(msg + " arg names are case-sensitive");
        }
      }
      msg += close.empty() ? "; known args: " : " known args: ";
      bool first = true;
      for (std::string_view k : known) {
        if (!first) msg += ", ";
        msg += name_of(k);
        first = false;
      }
      throw ArgsError(msg);
    }
  }

  // --- Getters that tell "absent" (nullopt) from a value; they throw when
  // the arg is present but invalid.

  // A non-empty string.
  std::optional<std::string> find_string(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
      throw ArgsError(describe(key, *v, "a non-empty string"));
    }
    return v->get<std::string>();
  }
  std::optional<bool> find_boolean(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) throw ArgsError(describe(key, *v, "true or false"));
    return v->get<bool>();
  }
  // An integer within [min, max].
  std::optional<int64_t> find_integer(std::string_view key, int64_t min,
                                      int64_t max) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
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
  // A number within [min, max].
  std::optional<double> find_number(std::string_view key, double min,
                                    double max) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    const std::string want = "a number from " + fmt(min) + " to " + fmt(max);
    if (!v->is_number()) throw ArgsError(describe(key, *v, want));
    const double d = v->get<double>();
    if (!(d >= min && d <= max)) throw ArgsError(describe(key, *v, want));
    return d;
  }
  // A duration > 0 written as Kubernetes does: "5s", "250ms", "1m30s".
  std::optional<std::chrono::nanoseconds> find_duration(
      std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    const char* want =
        "a duration such as \"5s\", \"250ms\" or \"1m30s\" (units ns, us, "
        "ms, s, m, h), greater than 0";
    if (!v->is_string()) throw ArgsError(describe(key, *v, want));
    const auto ns = detail::parse_duration_ns(v->get_ref<const std::string&>());
    if (!ns.has_value() || *ns <= 0) throw ArgsError(describe(key, *v, want));
    return std::chrono::nanoseconds(*ns);
  }
  // A list of non-empty strings (may be empty).
  std::optional<std::vector<std::string>> find_string_list(
      std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    const char* want = "a list of non-empty strings";
    if (!v->is_array()) throw ArgsError(describe(key, *v, want));
    std::vector<std::string> out;
    out.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
      const nlohmann::json& item = (*v)[i];
      if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
        throw ArgsError(
            describe_full(name_of(key) + "[" + std::to_string(i) + "]", item,
                          "a non-empty string"));
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  // A nested object, whose own errors name "key.inner".
  std::optional<Args> find_object(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_object()) {
      throw ArgsError(describe(key, *v, "an object of named values"));
    }
    return Args(*v, name_of(key));
  }

  // --- Getters with a fallback for an absent arg.

  // A non-empty string, or `fallback` when the arg is absent.
  std::string string(std::string_view key, std::string fallback) const {
    return find_string(key).value_or(std::move(fallback));
  }
  // A required non-empty string.
  std::string required_string(std::string_view key) const {
    auto v = find_string(key);
    if (!v.has_value()) {
      throw ArgsError("missing arg \"" + name_of(key) +
                      "\" (a non-empty string)");
    }
    return *std::move(v);
  }
  // A number within [min, max], or `fallback` when absent.
  double number(std::string_view key, double fallback, double min,
                double max) const {
    return find_number(key, min, max).value_or(fallback);
  }
  // An integer within [min, max], or `fallback` when absent.
  int64_t integer(std::string_view key, int64_t fallback, int64_t min,
                  int64_t max) const {
    return find_integer(key, min, max).value_or(fallback);
  }
  bool boolean(std::string_view key, bool fallback) const {
    return find_boolean(key).value_or(fallback);
  }
  std::chrono::nanoseconds duration(std::string_view key,
                                    std::chrono::nanoseconds fallback) const {
    return find_duration(key).value_or(fallback);
  }
  std::vector<std::string> string_list(
      std::string_view key, std::vector<std::string> fallback = {}) const {
    auto v = find_string_list(key);
    return v.has_value() ? *std::move(v) : std::move(fallback);
  }
  // A nested object; an empty one when absent.
  Args object(std::string_view key) const {
    auto v = find_object(key);
    return v.has_value() ? *std::move(v)
                         : Args(nlohmann::json::object(), name_of(key));
  }

 private:
  const nlohmann::json* find(std::string_view key) const {
    auto it = doc_.find(key);
    return it == doc_.end() ? nullptr : &*it;
  }
  std::string describe(std::string_view key, const nlohmann::json& v,
                       const std::string& want) const {
    return describe_full(name_of(key), v, want);
  }
  static std::string describe_full(const std::string& full_name,
                                   const nlohmann::json& v,
                                   const std::string& want) {
    std::string got = v.dump();
    if (got.size() > 60) got = got.substr(0, 57) + "...";
    return "arg \"" + full_name + "\" must be " + want + ", got " + got;
  }
  static std::string fmt(double d) {
    if (d == std::floor(d) && std::fabs(d) < 1e15) {
      return std::to_string(static_cast<long long>(d));
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, r.ptr);
  }

  nlohmann::json doc_;
  std::string path_;
};

}  // namespace schedplug
