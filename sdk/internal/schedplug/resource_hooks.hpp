// schedplug runtime rules for the hooks of plugins that own a resource
// (plugin.h v1.6: reserve, unreserve, permit, pre_bind, pre_enqueue): which
// status codes each may return, the permit timeout's limits, and the pod
// patch pre_bind() writes to (Kubernetes' label and annotation syntax, the
// patch's size limits), in one header that schedplug-host and the test kit
// both use, like schedplug/runtime.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"

namespace schedplug::runtime {

// ---------------------------------------------------------------------------
// Kubernetes names (k8s.io/apimachinery/pkg/util/validation), with
// schedplug-host's sentences.

namespace names_detail {
inline bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}
inline bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
}  // namespace names_detail

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63 characters.
inline bool is_name_part(std::string_view s) {
  using names_detail::alnum;
  if (s.empty() || s.size() > 63) return false;
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s) {
    if (!(alnum(c) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

// A DNS-1123 subdomain: lowercase labels of [a-z0-9-], alphanumeric at both
// ends, at most 63 characters each, joined by '.', at most 253 in all.
inline bool is_dns_subdomain(std::string_view s) {
  using names_detail::lower_alnum;
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('.', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view label = s.substr(start, end - start);
    if (label.empty() || label.size() > 63) return false;
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!(lower_alnum(c) || c == '-')) return false;
    }
    start = end + 1;
  }
  return true;
}

// A key or value as a message shows it: valid UTF-8, cut at 80 bytes.
inline std::string shown(std::string_view s) {
  std::string text = valid_utf8(s.substr(0, 80));
  if (s.size() > 80) text += "...";
  return text;
}

// Why `key` is not a Kubernetes qualified name (a label or annotation key:
// an optional DNS subdomain prefix and '/', then a name of at most 63
// characters); empty when it is one.
inline std::string qualified_name_problem(std::string_view key) {
  std::string_view name = key;
  if (const size_t slash = key.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!is_dns_subdomain(prefix)) {
      return "its prefix \"" + shown(prefix) +
             "\" is not a DNS subdomain (lowercase letters, digits, '-' and "
             "'.', at most 253 characters)";
    }
  }
  if (!is_name_part(name)) {
    return "its name \"" + shown(name) +
           "\" is not a qualified name (1 to 63 characters: letters, digits, "
           "'-', '_' and '.', beginning and ending with a letter or digit)";
  }
  return {};
}

// Why `value` is not a valid label value; empty when it is one.
inline std::string label_value_problem(std::string_view value) {
  if (value.empty() || is_name_part(value)) return {};
  return "a label value is empty or 1 to 63 characters: letters, digits, "
         "'-', '_' and '.', beginning and ending with a letter or digit";
}

// Why the host refuses the pod label `key`=`value`, in a sentence naming
// the key, or empty.
inline std::string pod_label_problem(std::string_view key,
                                     std::string_view value) {
  if (std::string p = qualified_name_problem(key); !p.empty()) {
    return "the label key \"" + shown(key) + "\" was refused: " + p;
  }
  if (std::string p = label_value_problem(value); !p.empty()) {
    return "the label \"" + shown(key) + "\" was refused: its value \"" +
           shown(value) + "\" is not valid (" + p + ")";
  }
  return {};
}

// Why the host refuses the pod annotation `key`=`value` (a key that is not
// a qualified name, a value over SCHEDPLUG_POD_PATCH_VALUE_MAX bytes or
// not UTF-8), in a sentence naming the key, or empty.
inline std::string pod_annotation_problem(std::string_view key,
                                          std::string_view value) {
  if (std::string p = qualified_name_problem(key); !p.empty()) {
    return "the annotation key \"" + shown(key) + "\" was refused: " + p;
  }
  if (value.size() > SCHEDPLUG_POD_PATCH_VALUE_MAX) {
    return "the annotation \"" + shown(key) + "\" was refused: its value is " +
           std::to_string(value.size()) +
           " bytes, more than SCHEDPLUG_POD_PATCH_VALUE_MAX (" +
           std::to_string(SCHEDPLUG_POD_PATCH_VALUE_MAX) + ")";
  }
  if (!is_valid_utf8(value)) {
    return "the annotation \"" + shown(key) +
           "\" was refused: its value is not valid UTF-8";
  }
  return {};
}

// ---------------------------------------------------------------------------
// The pod patch of one pre_bind() call.

// Owns the schedplug_pod_patch handed to pre_bind() and what it collected:
// each set_* checks the entry (pod_label_problem, pod_annotation_problem,
// at most SCHEDPLUG_POD_PATCH_MAX distinct entries) and keeps it, or
// returns ERROR taking nothing, keeping the first refusal's sentence.
// Thread-safe (a plugin may set from threads of its own during the call).
// Not copyable: the struct points at it.
class PodPatchCollector {
 public:
  PodPatchCollector() {
    patch_.struct_size = sizeof(patch_);
    patch_.context = this;
    patch_.set_annotation = &PodPatchCollector::set_annotation;
    patch_.set_label = &PodPatchCollector::set_label;
  }
  PodPatchCollector(const PodPatchCollector&) = delete;
  PodPatchCollector& operator=(const PodPatchCollector&) = delete;

  schedplug_pod_patch* get() { return &patch_; }
  // Sorted by key; read them after pre_bind() returned.
  const std::map<std::string, std::string>& labels() const { return labels_; }
  const std::map<std::string, std::string>& annotations() const {
    return annotations_;
  }
  // Why the first refused entry was refused, or empty.
  const std::string& refused() const { return refused_; }

 private:
  static schedplug_code set_label(void* context, schedplug_str key,
                                  schedplug_str value) {
    auto* self = static_cast<PodPatchCollector*>(context);
    const std::string_view k(key.data, key.len), v(value.data, value.len);
    return self->put(self->labels_, k, v, pod_label_problem(k, v));
  }
  static schedplug_code set_annotation(void* context, schedplug_str key,
                                       schedplug_str value) {
    auto* self = static_cast<PodPatchCollector*>(context);
    const std::string_view k(key.data, key.len), v(value.data, value.len);
    return self->put(self->annotations_, k, v, pod_annotation_problem(k, v));
  }
  schedplug_code put(std::map<std::string, std::string>& into,
                     std::string_view key, std::string_view value,
                     std::string problem) {
    std::lock_guard lock(mu_);
    if (problem.empty() && into.find(std::string(key)) == into.end() &&
        labels_.size() + annotations_.size() >= SCHEDPLUG_POD_PATCH_MAX) {
      problem = std::string("the ") +
                (&into == &labels_ ? "label" : "annotation") + " \"" +
                shown(key) + "\" was refused: the patch already holds " +
                std::to_string(SCHEDPLUG_POD_PATCH_MAX) +
                " labels and annotations, the most one pre_bind() may set "
                "(SCHEDPLUG_POD_PATCH_MAX)";
    }
    if (!problem.empty()) {
      if (refused_.empty()) refused_ = std::move(problem);
      return SCHEDPLUG_ERROR;
    }
    into[std::string(key)] = std::string(value);
    return SCHEDPLUG_SUCCESS;
  }

  schedplug_pod_patch patch_{};
  std::mutex mu_;
  std::map<std::string, std::string> labels_, annotations_;
  std::string refused_;
};

// ---------------------------------------------------------------------------
// The hooks' results.

// What reserve(), permit(), pre_bind() or pre_enqueue() (`hook`) returned,
// as the host reads it: SKIP is SUCCESS; SCHEDPLUG_WAIT (without a reason)
// only from permit() (`may_wait`); any other unknown code an ERROR naming
// the plugin.
inline Verdict resource_hook_verdict(const std::string& plugin,
                                     const char* hook, schedplug_code code,
                                     std::string_view reason, bool may_wait) {
  if (code == SCHEDPLUG_SUCCESS || code == SCHEDPLUG_SKIP) return {};
  if (code == SCHEDPLUG_WAIT && may_wait) return {SCHEDPLUG_WAIT, {}};
  if (!is_known_code(code)) {
    return {SCHEDPLUG_ERROR,
            "plugin " + plugin + " returned the " +
                (code == SCHEDPLUG_WAIT
                     ? std::string("code WAIT, which only permit() may "
                                   "return,")
                     : "unknown status code " + std::to_string(code)) +
                " from " + hook + "()"};
  }
  return {code, valid_utf8(reason)};
}

// How long a pod waits after permit() returned SCHEDPLUG_WAIT with
// `timeout_ms` (0: the most), or 0 with `problem` set when the timeout is
// longer than kube-scheduler allows.
inline uint64_t permit_wait_ms(const std::string& plugin, uint64_t timeout_ms,
                               std::string& problem) {
  if (timeout_ms == 0) return SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS;
  if (timeout_ms > SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS) {
    problem = "plugin " + plugin + "'s permit() made the pod wait " +
              std::to_string(timeout_ms) + " ms, longer than the " +
              std::to_string(SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS) +
              " ms (15 minutes) kube-scheduler allows; set timeout_ms to at "
              "most SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS (0 means that much)";
    return 0;
  }
  return timeout_ms;
}

// Why pre_bind() failed when the patch refused an entry (the host names
// the key in the pod's failure, whatever code the plugin returned, with the
// plugin's own reason when it gave one); empty when nothing was refused.
inline std::string pre_bind_refused(const std::string& plugin, const Verdict& v,
                                    const PodPatchCollector& patch) {
  if (patch.refused().empty()) return {};
  std::string why = "plugin " + plugin + "'s pre_bind(): " + patch.refused();
  if (!v.ok() && !v.reason.empty()) {
    why += " (the plugin says: " + v.reason + ")";
  }
  return why;
}

}  // namespace schedplug::runtime
