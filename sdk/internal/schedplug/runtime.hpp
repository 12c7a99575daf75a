// schedplug runtime rules: what a host does around every call into a
// plugin — which descriptors it accepts, how it reads status codes and
// reasons, how it maps raw scores onto [0, 100], how C plugins read their
// args — in one header that schedplug-host and the test kit
// (<schedplug/testing.hpp>) both use, so a plugin's tests see exactly the
// answers and messages the host would give.
//
// Plugins cannot include this: it sits outside the authors' include
// directory (sdk/internal/, CMake target schedplug::rules for the host; the
// installed kit reaches it through schedplug::testing). The descriptor,
// settings and normalization rules are pinned by proto/testdata's vectors,
// which the Rust kit's own copy checks too. One file, although long: the
// host and the kits must compile exactly the same rules, and its parts
// (plugin text, descriptors, settings, codes, normalization, args) build on
// one another. C++20, header-only; needs nlohmann/json (through
// schedplug/cpp/args.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedplug/cpp/args.hpp"
#include "schedplug/plugin.h"

namespace schedplug::runtime {

// ---------------------------------------------------------------------------
// Results of one hook call, as the host sees them.

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

// ---------------------------------------------------------------------------
// Text from plugins.
//
// Whatever a plugin writes (reasons, error messages, exception texts) ends
// up in proto3 `string` fields, which must be valid UTF-8: one bad byte
// makes the whole answer unserializable, so every node's verdict of the
// call would be lost, and Go refuses to decode it. So the host makes every
// such text valid where it copies it: a character cut off at the end (a
// reason cut at its byte limit) is dropped, any other invalid byte becomes
// U+FFFD.

// The length of the well-formed UTF-8 character (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF) at the start of `s`, or 0
// when `s` does not start with one.
inline size_t utf8_char_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

inline bool is_valid_utf8(std::string_view s) {
  for (size_t at = 0; at < s.size();) {
    if (static_cast<unsigned char>(s[at]) < 0x80) {
      ++at;
      continue;
    }
    const size_t n = utf8_char_length(s.substr(at));
    if (n == 0) return false;
    at += n;
  }
  return true;
}

// `s` as valid UTF-8: an incomplete character at the very end (text cut at
// a byte limit) is dropped; every other byte that starts no well-formed
// character becomes U+FFFD.
inline std::string valid_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t at = 0; at < s.size();) {
    const size_t n = utf8_char_length(s.substr(at));
    if (n > 0) {
      out.append(s.substr(at, n));
      at += n;
      continue;
    }
    // The tail is the start of one character that was cut off: drop it.
    const size_t rest = s.size() - at;
    const unsigned char c = static_cast<unsigned char>(s[at]);
    const size_t wanted = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    bool cut = wanted > rest && rest > 0;
    for (size_t i = 1; cut && i < rest; ++i) {
      cut = (static_cast<unsigned char>(s[at + i]) & 0xC0) == 0x80;
    }
    if (cut) break;
    out += "\xEF\xBF\xBD";  // U+FFFD
    ++at;
  }
  return out;
}

// A host-owned reason buffer for one hook call (plugin.h: the host copies
// the text after the hook returns).
class ReasonBuffer {
 public:
  ReasonBuffer() { text_[0] = '\0'; }
  schedplug_reason* get() {
    reason_ = {text_, sizeof(text_)};
    return &reason_;
  }
  // Copies the text out, tolerating a plugin that forgot the NUL, as
  // valid UTF-8.
  std::string str() const {
    return valid_utf8(std::string_view(text_, strnlen(text_, sizeof(text_))));
  }

 private:
  char text_[SCHEDPLUG_REASON_MAX];
  schedplug_reason reason_{};
};

inline std::string str_of(schedplug_str s) {
  return std::string(s.data == nullptr ? "" : s.data, s.len);
}

// Fills a view's v1.1 element sizes with this host's element sizes (the
// v1.0 sizes: plugin.h rule 5 lets a host grow an element only for plugins
// that index by element size).
inline void set_element_sizes(schedplug_pod& pod) {
  pod.kv_size = sizeof(schedplug_kv);
  pod.resource_size = sizeof(schedplug_resource);
  pod.toleration_size = sizeof(schedplug_toleration);
  pod.node_score_size = sizeof(schedplug_node_score);
  pod.owner_size = sizeof(schedplug_owner);
  pod.container_size = sizeof(schedplug_container);
  pod.port_size = sizeof(schedplug_container_port);
  pod.volume_size = sizeof(schedplug_volume);
  pod.requirement_size = sizeof(schedplug_selector_requirement);
  pod.node_selector_term_size = sizeof(schedplug_node_selector_term);
  pod.topology_spread_size = sizeof(schedplug_topology_spread_constraint);
  pod.pod_affinity_term_size = sizeof(schedplug_pod_affinity_term);
}
inline void set_element_sizes(schedplug_node& node) {
  node.kv_size = sizeof(schedplug_kv);
  node.resource_size = sizeof(schedplug_resource);
  node.taint_size = sizeof(schedplug_taint);
  node.condition_size = sizeof(schedplug_node_condition);
  node.node_pod_size = sizeof(schedplug_node_pod);
  node.image_size = sizeof(schedplug_node_image);
}

// ---------------------------------------------------------------------------
// Descriptors.

// The size of the descriptor as ABI version 1 first defined it. Later v1
// headers may append fields (the host then reads only what it knows), but a
// descriptor smaller than this lacks fields every v1 host relies on.
inline constexpr std::size_t kV1DescriptorSize =
    offsetof(schedplug_plugin, events) + sizeof(uint64_t);

// True when `name` is UpperCamelCase: [A-Z][A-Za-z0-9]*.
inline bool is_upper_camel_case(std::string_view name) {
  if (name.empty() || name[0] < 'A' || name[0] > 'Z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9');
  });
}

// A likely intended UpperCamelCase spelling of a bad name, e.g.
// "hw_encrypt" and "hwEncrypt" -> "HwEncrypt". Empty when none is obvious.
inline std::string upper_camel_case_of(std::string_view name) {
  std::string out;
  bool upper_next = true;
  for (char c : name) {
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !digit) {
      upper_next = true;
      continue;
    }
    if (upper_next && c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
    upper_next = false;
    out.push_back(c);
  }
  return is_upper_camel_case(out) ? out : std::string();
}

// Checks the descriptor `entry` returned by schedplug_plugin_v1() and copies
// it into `out`, a zero-filled struct of this header's size (fields an
// older plugin lacks read as 0/NULL). Returns why the descriptor is
// unusable — a sentence for after "<file>: " — or empty. The ABI version is
// checked first: nothing else is trusted before it.
inline std::string accept_descriptor(const schedplug_plugin* entry,
                                     schedplug_plugin& out) {
  const std::string sym = SCHEDPLUG_ENTRY_SYMBOL;
  if (entry == nullptr) {
    return "`" + sym +
           "()` returned NULL; it must return a pointer to the plugin's "
           "static descriptor";
  }
  if (entry->abi_version != SCHEDPLUG_ABI_VERSION) {
    return "built for schedplug ABI version " +
           std::to_string(entry->abi_version) + ", this host speaks version " +
           std::to_string(SCHEDPLUG_ABI_VERSION) +
           "; rebuild the plugin against this host's SDK";
  }
  if (entry->struct_size < kV1DescriptorSize) {
    return "the descriptor is " + std::to_string(entry->struct_size) +
           " bytes, smaller than the " + std::to_string(kV1DescriptorSize) +
           " bytes of ABI version 1's schedplug_plugin; set struct_size to "
           "sizeof(schedplug_plugin) and rebuild against this host's SDK";
  }
  out = schedplug_plugin{};
  // Only the fields both sides know: a newer v1 plugin may have appended
  // fields this host ignores; an older one leaves ours zero.
  std::memcpy(&out, entry,
              std::min<std::size_t>(entry->struct_size, sizeof(out)));
  // A hook the descriptor's size covers only in part was not set by the
  // plugin: no pointer is read from bytes of whatever follows it.
  const auto covered = [&](std::size_t offset, std::size_t size) {
    return offset + size <= entry->struct_size;
  };
#define SCHEDPLUG_ZERO_UNCOVERED(field)                               \
  if (!covered(offsetof(schedplug_plugin, field), sizeof(out.field))) \
    out.field = nullptr;
  SCHEDPLUG_ZERO_UNCOVERED(reserve)
  SCHEDPLUG_ZERO_UNCOVERED(unreserve)
  SCHEDPLUG_ZERO_UNCOVERED(permit)
  SCHEDPLUG_ZERO_UNCOVERED(pre_bind)
  SCHEDPLUG_ZERO_UNCOVERED(pre_enqueue)
#undef SCHEDPLUG_ZERO_UNCOVERED
  const schedplug_plugin& d = out;
  // The order matters only for which message a plugin with several
  // problems sees first.
  if (d.name == nullptr || d.name[0] == '\0') {
    return "the plugin reports an empty name; set the descriptor's `name` to "
           "the UpperCamelCase name profiles enable, e.g. \"HwEncrypt\"";
  }
  const std::string name = d.name;
  if (!is_upper_camel_case(name)) {
    std::string hint = upper_camel_case_of(name);
    return "the plugin name \"" + name +
           "\" is not UpperCamelCase ([A-Z][A-Za-z0-9]*, as kube-scheduler "
           "plugin names are); rename it" +
           (hint.empty() ? std::string() : " (e.g. \"" + hint + "\")") +
           " and enable it under that name";
  }
  if (d.version == nullptr || d.version[0] == '\0') {
    return "plugin \"" + name +
           "\" reports no version string; set the descriptor's `version`, "
           "e.g. \"1.0.0\"";
  }
  if (!is_valid_utf8(d.version)) {
    return "plugin \"" + name + "\" reports a version string that is not " +
           "valid UTF-8 (\"" + valid_utf8(d.version) +
           "\"); set the descriptor's `version` to text such as \"1.0.0\"";
  }
  if (d.create == nullptr) {
    return "plugin \"" + name +
           "\" has no create() hook; every plugin must set `create`";
  }
  if (d.normalize_score != nullptr && d.score == nullptr) {
    return "plugin \"" + name +
           "\" implements NormalizeScore but not Score; set `score` too, or "
           "remove `normalize_score`";
  }
  const auto policy = static_cast<uint32_t>(d.normalize_policy);
  if (policy > SCHEDPLUG_NORMALIZE_REVERSE) {
    return "plugin \"" + name + "\" declares normalize_policy " +
           std::to_string(policy) +
           ", which is not one of NONE (0), LINEAR (1), REVERSE (2)";
  }
  if (d.normalize_score != nullptr &&
      d.normalize_policy != SCHEDPLUG_NORMALIZE_NONE) {
    return "plugin \"" + name +
           "\" sets both normalize_score and a normalize_policy; use one: "
           "drop normalize_score or set the policy to "
           "SCHEDPLUG_NORMALIZE_NONE";
  }
  if (d.unreserve != nullptr && d.reserve == nullptr && d.permit == nullptr) {
    return "plugin \"" + name +
           "\" implements unreserve() but neither reserve() nor permit(), so "
           "nothing it could release is ever taken; set `reserve` (or "
           "`permit`) too, or remove `unreserve`";
  }
  if (d.refresh != nullptr && d.refresh_period_ms == 0) {
    return "plugin \"" + name +
           "\" has a refresh() hook but refresh_period_ms is 0; set how "
           "often the host should call it";
  }
  return {};
}

// The settings create() starts from: the descriptor's (plugin.h v1.1).
inline schedplug_settings initial_settings(const schedplug_plugin& d) {
  schedplug_settings s{};
  s.struct_size = sizeof(schedplug_settings);
  s.refresh_period_ms = d.refresh_period_ms;
  s.events = d.events;
  s.normalize_policy = d.normalize_policy;
  return s;
}

// The rules of plugin.h for settings create() returned; a sentence naming
// the problem, or empty.
inline std::string settings_problem(const schedplug_plugin& d,
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
  struct BitField {
    const char* field;
    uint64_t bits, known;
    const char* names;
  };
  for (const auto& [field, bits, known, names] :
       {BitField{"data", s.data, SCHEDPLUG_DATA_ALL, "SCHEDPLUG_DATA_*"},
        BitField{"hints", s.hints, SCHEDPLUG_HINT_ALL, "SCHEDPLUG_HINT_*"},
        BitField{"events", s.events, SCHEDPLUG_EVENT_ALL,
                 "SCHEDPLUG_EVENT_*"}}) {
    if ((bits & ~known) != 0) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx",
                    static_cast<unsigned long long>(bits & ~known));
      return std::string(field) + " has bits " + hex + " that are not " +
             names + " values";
    }
  }
  // A refresh hook changes what the answers depend on over time, which
  // both identity hints rule out (plugin.h).
  struct IdentityHint {
    uint64_t bit;
    const char* name;
    const char* answers;
  };
  for (const auto& [bit, hint, answers] :
       {IdentityHint{SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
                     "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY", "verdicts"},
        IdentityHint{SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY,
                     "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY", "scores"}}) {
    if ((s.hints & bit) != 0 && d.refresh != nullptr &&
        s.refresh_period_ms > 0) {
      return std::string("hints has ") + hint + ", which promises " + answers +
             " that do not change over time, but the plugin has a refresh() "
             "hook (every " +
             std::to_string(s.refresh_period_ms) + " ms) that can change " +
             "them; drop the hint, or the refresh hook";
    }
  }
  // A promise about scores the plugin never gives would sign pods for a
  // Score it does not take part in: most likely a mistake.
  if ((s.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) != 0 &&
      d.score == nullptr) {
    return "hints has SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a promise "
           "about score() and normalize_score(), but the plugin has no "
           "score() hook; drop the hint, or implement score()";
  }
  // The keys of SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (plugin.h
  // v1.4): read here, while the instance that owns them is alive.
  struct KeyList {
    const char* field;
    const char* count_field;
    const schedplug_str* keys;
    uint64_t count;
  };
  for (const auto& [field, count_field, keys, count] :
       {KeyList{"pod_label_keys", "pod_label_key_count", s.pod_label_keys,
                s.pod_label_key_count},
        KeyList{"pod_annotation_keys", "pod_annotation_key_count",
                s.pod_annotation_keys, s.pod_annotation_key_count}}) {
    if (count == 0) continue;
    const std::string n = std::to_string(count);
    if (keys == nullptr) {
      return std::string(field) + " is NULL but " + count_field + " is " + n +
             "; point " + field + " at the " + n +
             " keys, or set the count to 0";
    }
    if (count > SCHEDPLUG_POD_KEYS_MAX) {
      return std::string(count_field) + " is " + n + ", more than the " +
             std::to_string(SCHEDPLUG_POD_KEYS_MAX) +
             " keys a list may hold; declare at most " +
             std::to_string(SCHEDPLUG_POD_KEYS_MAX) +
             ", or drop SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS and the "
             "keys";
    }
    for (uint64_t i = 0; i < count; ++i) {
      const std::string at = std::string(field) + "[" + std::to_string(i) + "]";
      if (keys[i].len == 0) {
        return at +
               " is an empty key; list only the non-empty keys the plugin "
               "reads (an empty list declares none)";
      }
      if (keys[i].data == nullptr) {
        return at + " has NULL data and length " + std::to_string(keys[i].len) +
               "; point it at the key's bytes";
      }
      if (!is_valid_utf8({keys[i].data, keys[i].len})) {
        return at + " (\"" + valid_utf8({keys[i].data, keys[i].len}) +
               "\") is not valid UTF-8, so no pod's key can equal it; list " +
               "the keys as Kubernetes writes them";
      }
    }
    if ((s.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS) == 0) {
      return std::string(field) + " lists " + n +
             (count == 1 ? " key" : " keys") + " (the first is \"" +
             str_of(keys[0]) +
             "\") but hints lacks "
             "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, "
             "which the keys go with; set the hint, or leave " +
             field + " empty";
    }
  }
  return {};
}

// The pod label and annotation keys an instance declared (plugin.h v1.4,
// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS), copied out of the
// plugin's memory right after create() returned, once settings_problem()
// accepted them; the plugin's arrays are never read again. Sorted, without
// duplicates. Not copyable: the settings it repoints view its strings.
class PodKeys {
 public:
  PodKeys() = default;
  PodKeys(const PodKeys&) = delete;
  PodKeys& operator=(const PodKeys&) = delete;

  // Copies the keys `s` lists and points its arrays at the copies.
  void keep(schedplug_settings& s) {
    labels_ = copy(s.pod_label_keys, s.pod_label_key_count);
    annotations_ = copy(s.pod_annotation_keys, s.pod_annotation_key_count);
    label_views_ = views(labels_);
    annotation_views_ = views(annotations_);
    s.pod_label_keys = labels_.empty() ? nullptr : label_views_.data();
    s.pod_label_key_count = labels_.size();
    s.pod_annotation_keys =
        annotations_.empty() ? nullptr : annotation_views_.data();
    s.pod_annotation_key_count = annotations_.size();
  }
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<std::string>& annotations() const { return annotations_; }

 private:
  static std::vector<std::string> copy(const schedplug_str* keys,
                                       uint64_t count) {
    std::vector<std::string> out;
    if (keys == nullptr) return out;
    out.reserve(count);
    for (uint64_t i = 0; i < count; ++i) out.push_back(str_of(keys[i]));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  static std::vector<schedplug_str> views(const std::vector<std::string>& in) {
    std::vector<schedplug_str> out;
    out.reserve(in.size());
    for (const std::string& k : in) out.push_back({k.data(), k.size()});
    return out;
  }
  std::vector<std::string> labels_, annotations_;
  std::vector<schedplug_str> label_views_, annotation_views_;
};

// ---------------------------------------------------------------------------
// Hook results.

inline std::string threw_message(const std::string& plugin, const char* hook,
                                 std::exception_ptr error) {
  std::string what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = valid_utf8(e.what());
  } catch (...) {
  }
  return "plugin " + plugin + " threw through the C ABI: " + what + " (from " +
         hook +
         "(); C++ plugins must catch every exception at the boundary, as the "
         "SDK's C++ layer does)";
}

inline bool is_known_code(int code) {
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

// What filter() returned, as the host reports it.
inline Verdict filter_verdict(const std::string& plugin, schedplug_code code,
                              std::string reason) {
  if (!is_known_code(code)) {
    return {SCHEDPLUG_ERROR,
            "plugin " + plugin + " returned the unknown status code " +
                std::to_string(static_cast<int>(code)) + " from filter()"};
  }
  return {code, std::move(reason)};
}

// What score() returned for `node`, as the host reports it.
inline ScoreResult score_result(const std::string& plugin,
                                const schedplug_node& node, schedplug_code code,
                                int64_t value, const std::string& reason) {
  if (code == SCHEDPLUG_SUCCESS) return {SCHEDPLUG_SUCCESS, value, {}};
  if (code == SCHEDPLUG_ERROR) {
    return {SCHEDPLUG_ERROR, 0,
            "plugin " + plugin + " failed to score node \"" +
                str_of(node.name) +
                "\": " + (reason.empty() ? "(no reason given)" : reason)};
  }
  return {SCHEDPLUG_ERROR, 0,
          "plugin " + plugin + " returned status code " +
              std::to_string(static_cast<int>(code)) +
              " from score(); score may only return SUCCESS or ERROR"};
}

inline std::string no_score_hook(const std::string& plugin) {
  return "plugin " + plugin + " has no score() hook but was asked to score";
}

// Why pod_begin() failed (it returned `code`, not SUCCESS).
inline std::string pod_begin_error(const std::string& plugin,
                                   schedplug_code code,
                                   const std::string& reason) {
  return code == SCHEDPLUG_ERROR
             ? "plugin " + plugin + " failed to prepare the pod (pod_begin): " +
                   (reason.empty() ? "(no reason given)" : reason)
             : "plugin " + plugin + " returned status code " +
                   std::to_string(code) +
                   " from pod_begin(); it may only return SUCCESS or ERROR";
}

// Why refresh() failed.
inline std::string refresh_failed(const std::string& plugin,
                                  const std::string& reason) {
  return "plugin " + plugin +
         " refresh failed: " + (reason.empty() ? "(no reason given)" : reason);
}

// ---------------------------------------------------------------------------
// Normalization.

// Maps raw scores onto [0, 100] by min-max (reverse: the lowest raw score
// gets 100). Every node gets 100 when all raw scores are equal: the nodes
// are equally good, and 100 keeps the plugin's weight meaningful against
// other plugins. Exact for any int64 values; rounds to nearest.
inline void min_max(std::span<schedplug_node_score> scores, bool reverse) {
  if (scores.empty()) return;
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

// Applies a declared policy (NONE leaves the values as they are).
inline void apply_policy(uint32_t policy,
                         std::span<schedplug_node_score> scores) {
  if (policy == SCHEDPLUG_NORMALIZE_LINEAR) {
    min_max(scores, /*reverse=*/false);
  } else if (policy == SCHEDPLUG_NORMALIZE_REVERSE) {
    min_max(scores, /*reverse=*/true);
  }
}

// The message for a failed normalize_score() call.
inline std::string normalize_failed(const std::string& plugin,
                                    const std::string& reason) {
  return "plugin " + plugin + " failed to normalize scores: " +
         (reason.empty() ? "(no reason given)" : reason);
}

// The host's own guarantee after normalizing: a value outside [0, 100] is
// an error naming the plugin and the node, never clamped (kube-scheduler
// would fail the cycle on it anyway). Empty when every score is in range.
inline std::string out_of_range(const std::string& plugin,
                                bool custom_normalize,
                                std::span<const schedplug_node_score> scores) {
  for (const auto& s : scores) {
    if (s.score < 0 || s.score > 100) {
      const std::string how =
          custom_normalize
              ? "after its normalize_score()"
              : "with normalize policy NONE (declare LINEAR or REVERSE, or "
                "implement normalize_score, to map raw values)";
      return "plugin " + plugin + " gave node \"" + str_of(s.node_name) +
             "\" the score " + std::to_string(s.score) + " " + how +
             "; scores must be in [0, 100]";
    }
  }
  return {};
}

// kube-scheduler's final score of a node: the sum over Score plugins of
// weight * normalized score (weights from the profile, 1 when not set).
inline int64_t weighted_sum(std::span<const int64_t> normalized,
                            std::span<const int64_t> weights) {
  int64_t total = 0;
  for (std::size_t i = 0; i < normalized.size(); ++i) {
    total += normalized[i] * (i < weights.size() ? weights[i] : 1);
  }
  return total;
}

// ---------------------------------------------------------------------------
// Typed args for C plugins (schedplug_host's arg_* functions, plugin.h
// v1.1), read with the C++ layer's own schedplug::Args, so both languages
// follow the same rules and messages.

// Owns everything the arg functions hand out during one create(): nested
// objects and strings stay valid until this object is destroyed.
class ArgsSession {
 public:
  // `args_json` is the plugin's args object. When it is not valid JSON or
  // not an object, root() is NULL and every getter reports why.
  explicit ArgsSession(const std::string& args_json) {
    try {
      objects_.push_back(Args::parse(args_json.empty() ? "{}" : args_json));
    } catch (const ArgsError& e) {
      parse_error_ = e.what();
    }
  }

  const schedplug_args* root() const {
    if (objects_.empty()) return nullptr;
    return reinterpret_cast<const schedplug_args*>(&objects_.front());
  }

  // The function the arg functions find the create() call's session with:
  // it gets schedplug_host::context and returns the session, or NULL
  // outside create().
  using Lookup = ArgsSession* (*)(void* context);

  // Sets the arg functions in `host`, and `host.args` to the session's
  // root (NULL without a session).
  template <Lookup lookup>
  static void install(schedplug_host& host, const ArgsSession* session);

  // Storage the getters hand out.
  const schedplug_args* keep(Args object) {
    objects_.push_back(std::move(object));
    return reinterpret_cast<const schedplug_args*>(&objects_.back());
  }
  const std::string& keep(std::string text) {
    strings_.push_back(std::move(text));
    return strings_.back();
  }
  const std::vector<schedplug_str>& keep(std::vector<schedplug_str> list) {
    lists_.push_back(std::move(list));
    return lists_.back();
  }
  const std::string& parse_error() const { return parse_error_; }

 private:
  std::deque<Args> objects_;
  std::deque<std::string> strings_;
  std::deque<std::vector<schedplug_str>> lists_;
  std::string parse_error_;
};

namespace args_detail {

inline void set_error(schedplug_reason* error, const std::string& text) {
  if (error == nullptr || error->text == nullptr || error->capacity == 0) {
    return;
  }
  const size_t n =
      schedplug_utf8_prefix(text.data(), text.size(), error->capacity - 1);
  std::memcpy(error->text, text.data(), n);
  error->text[n] = '\0';
}

inline const Args* args_of(const schedplug_args* obj) {
  return reinterpret_cast<const Args*>(obj);
}

// Runs `body` (which returns the found value or nullopt) against the
// session and object of a call, turning ArgsError into ERROR.
template <ArgsSession::Lookup lookup, class Body>
schedplug_code run(void* context, const schedplug_args* obj, const char* key,
                   schedplug_reason* error, Body&& body) noexcept {
  try {
    ArgsSession* session = context == nullptr ? nullptr : lookup(context);
    if (session == nullptr) {
      set_error(error,
                "args can only be read during create(); read them there and "
                "keep copies");
      return SCHEDPLUG_ERROR;
    }
    if (obj == nullptr) {
      set_error(error, session->parse_error().empty()
                           ? std::string("no args object given (pass "
                                         "host->args or a nested object)")
                           : session->parse_error());
      return SCHEDPLUG_ERROR;
    }
    if (key == nullptr) {
      set_error(error, "no arg name given (key is NULL)");
      return SCHEDPLUG_ERROR;
    }
    return body(*session, *args_of(obj), std::string_view(key))
               ? SCHEDPLUG_SUCCESS
               : SCHEDPLUG_SKIP;
  } catch (const ArgsError& e) {
    set_error(error, e.what());
  } catch (const std::exception& e) {
    set_error(error, std::string("reading args failed: ") + e.what());
  } catch (...) {
    set_error(error, "reading args failed");
  }
  return SCHEDPLUG_ERROR;
}

template <ArgsSession::Lookup lookup>
schedplug_code args_allow_only(void* context, const schedplug_args* obj,
                               const char* const* known, uint64_t count,
                               schedplug_reason* error) {
  return run<lookup>(context, obj, "", error,
                     [&](ArgsSession&, const Args& args, std::string_view) {
                       std::vector<std::string_view> keys;
                       for (uint64_t i = 0; i < count; ++i) {
                         if (known[i] != nullptr) keys.emplace_back(known[i]);
                       }
                       args.allow_only(std::span<const std::string_view>(keys));
                       return true;
                     }) == SCHEDPLUG_ERROR
             ? SCHEDPLUG_ERROR
             : SCHEDPLUG_SUCCESS;
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_string(void* context, const schedplug_args* obj,
                          const char* key, schedplug_str* out,
                          schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession& s, const Args& args, std::string_view k) {
                       auto v = args.find_string(k);
                       if (!v.has_value()) return false;
                       const std::string& kept = s.keep(*std::move(v));
                       *out = {kept.data(), kept.size()};
                       return true;
                     });
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_bool(void* context, const schedplug_args* obj,
                        const char* key, int32_t* out,
                        schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession&, const Args& args, std::string_view k) {
                       auto v = args.find_boolean(k);
                       if (!v.has_value()) return false;
                       *out = *v ? 1 : 0;
                       return true;
                     });
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_int(void* context, const schedplug_args* obj,
                       const char* key, int64_t min, int64_t max, int64_t* out,
                       schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession&, const Args& args, std::string_view k) {
                       auto v = args.find_integer(k, min, max);
                       if (!v.has_value()) return false;
                       *out = *v;
                       return true;
                     });
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_float(void* context, const schedplug_args* obj,
                         const char* key, double min, double max, double* out,
                         schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession&, const Args& args, std::string_view k) {
                       auto v = args.find_number(k, min, max);
                       if (!v.has_value()) return false;
                       *out = *v;
                       return true;
                     });
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_duration(void* context, const schedplug_args* obj,
                            const char* key, int64_t* out_ns,
                            schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession&, const Args& args, std::string_view k) {
                       auto v = args.find_duration(k);
                       if (!v.has_value()) return false;
                       *out_ns = v->count();
                       return true;
                     });
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_string_list(void* context, const schedplug_args* obj,
                               const char* key, const schedplug_str** items,
                               uint64_t* count, schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession& s, const Args& args, std::string_view k) {
                       auto v = args.find_string_list(k);
                       if (!v.has_value()) return false;
                       std::vector<schedplug_str> views;
                       views.reserve(v->size());
                       for (std::string& item : *v) {
                         const std::string& kept = s.keep(std::move(item));
                         views.push_back({kept.data(), kept.size()});
                       }
                       const auto& list = s.keep(std::move(views));
                       *items = list.data();
                       *count = list.size();
                       return true;
                     });
}

template <ArgsSession::Lookup lookup>
schedplug_code arg_object(void* context, const schedplug_args* obj,
                          const char* key, const schedplug_args** out,
                          schedplug_reason* error) {
  return run<lookup>(context, obj, key, error,
                     [&](ArgsSession& s, const Args& args, std::string_view k) {
                       auto v = args.find_object(k);
                       if (!v.has_value()) return false;
                       *out = s.keep(*std::move(v));
                       return true;
                     });
}

}  // namespace args_detail

template <ArgsSession::Lookup lookup>
void ArgsSession::install(schedplug_host& host, const ArgsSession* session) {
  host.args = session == nullptr ? nullptr : session->root();
  host.args_allow_only = &args_detail::args_allow_only<lookup>;
  host.arg_string = &args_detail::arg_string<lookup>;
  host.arg_bool = &args_detail::arg_bool<lookup>;
  host.arg_int = &args_detail::arg_int<lookup>;
  host.arg_float = &args_detail::arg_float<lookup>;
  host.arg_duration = &args_detail::arg_duration<lookup>;
  host.arg_string_list = &args_detail::arg_string_list<lookup>;
  host.arg_object = &args_detail::arg_object<lookup>;
}

// The messages of a failed create(): `where` is "Name (file)".
inline std::string create_threw(const std::string& where,
                                const std::string& plugin,
                                std::exception_ptr error) {
  return where + " failed to start: " + threw_message(plugin, "create", error);
}
inline std::string create_rejected(const std::string& where,
                                   std::string message,
                                   const std::string& args_json) {
  if (message.empty()) message = "(the plugin gave no message)";
  return where + " rejected its args: " + message +
         "; fix its pluginConfig args (given: " + args_json + ")";
}
inline std::string create_broken_settings(const std::string& where,
                                          const std::string& problem,
                                          const std::string& args_json) {
  return where + " returned broken settings from create(): " + problem +
         " (args given: " + args_json + ")";
}

}  // namespace schedplug::runtime
