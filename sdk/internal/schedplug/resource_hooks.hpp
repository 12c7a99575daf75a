// schedplug runtime rules for the hooks of plugins that own a resource
// (plugin.h v1.6: reserve, unreserve, permit, pre_bind, pre_enqueue): which
// status codes each may return, the permit timeout's limits, and the pod
// patch pre_bind() writes to (Kubernetes' label and annotation syntax, the
// patch's size limits), in one header that schedplug-host and the test kit
// both use, like schedplug/runtime.hpp.
#pragma once

#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"

namespace schedplug::runtime {

// ---------------------------------------------------------------------------
// Kubernetes names (k8s.io/apimachinery/pkg/util/validation).

// Why `s` is not a DNS-1123 subdomain (a qualified name's prefix:
// lowercase letters, digits, '-' and '.', each dot-separated part starting
// and ending with a letter or digit, at most 253 characters), or empty.
inline std::string dns_subdomain_problem(std::string_view s) {
  if (s.empty()) return "the prefix before '/' is empty";
  if (s.size() > 253)
    return "the prefix before '/' is longer than 253 characters";
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('.', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view part = s.substr(start, end - start);
    bool ok = !part.empty() && alnum(part.front()) && alnum(part.back());
    for (char c : part) ok = ok && (alnum(c) || c == '-');
    if (!ok) {
      return "the prefix \"" + std::string(s) +
             "\" is not a DNS subdomain (lowercase letters, digits, '-' and "
             "'.', each part between dots beginning and ending with a letter "
             "or digit)";
    }
    start = end + 1;
  }
  return {};
}

// Why `s` is not a label value / a qualified name's name part (at most 63
// characters of [A-Za-z0-9_.-], beginning and ending with a letter or
// digit; empty only when `empty_ok`), or empty. `what` names it.
inline std::string name_part_problem(std::string_view s, const char* what,
                                     bool empty_ok) {
  if (s.empty()) {
    return empty_ok ? std::string() : std::string(what) + " is empty";
  }
  if (s.size() > 63) {
    return std::string(what) + " is " + std::to_string(s.size()) +
           " characters long, more than 63";
  }
  const auto alnum = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
  };
  bool ok = alnum(s.front()) && alnum(s.back());
  for (char c : s) ok = ok && (alnum(c) || c == '-' || c == '_' || c == '.');
  if (!ok) {
    return std::string(what) +
           " must consist of letters, digits, '-', '_' and '.', and begin "
           "and end with a letter or digit";
  }
  return {};
}

// Why `key` is not a qualified name ([prefix/]name: a label key, and, with
// its prefix lowercased, an annotation key), or empty.
inline std::string qualified_name_problem(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) {
    return name_part_problem(key, "the name", false);
  }
  if (key.find('/', slash + 1) != std::string_view::npos) {
    return "it has more than one '/'";
  }
  if (std::string p = dns_subdomain_problem(key.substr(0, slash)); !p.empty()) {
    return p;
  }
  return name_part_problem(key.substr(slash + 1), "the name after '/'", false);
}

// Why Kubernetes would refuse the pod label `key`=`value`, in a sentence,
// or empty.
inline std::string pod_label_problem(std::string_view key,
                                     std::string_view value) {
  if (std::string p = qualified_name_problem(key); !p.empty()) {
    return "the label key \"" + valid_utf8(key) +
           "\" is not a qualified name ([prefix/]name, e.g. "
           "example.com/device): " +
           p;
  }
  if (std::string p = name_part_problem(value, "the value", true); !p.empty()) {
    return "the label " + std::string(key) + "=\"" +
           valid_utf8(value.substr(0, 80)) +
           "\" is not a valid label value: " + p;
  }
  return {};
}

// Why the pod annotation `key`=`value` is refused (a key Kubernetes would
// refuse, a value that is not UTF-8 or longer than
// SCHEDPLUG_POD_PATCH_VALUE_MAX bytes), in a sentence, or empty.
inline std::string pod_annotation_problem(std::string_view key,
                                          std::string_view value) {
  std::string lower(key);
  const size_t slash = lower.find('/');
  for (size_t i = 0; i < lower.size() && i < slash; ++i) {
    lower[i] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(lower[i])));
  }
  if (std::string p = qualified_name_problem(lower); !p.empty()) {
    return "the annotation key \"" + valid_utf8(key) +
           "\" is not a qualified name ([prefix/]name, e.g. "
           "example.com/device): " +
           p;
  }
  if (value.size() > SCHEDPLUG_POD_PATCH_VALUE_MAX) {
    return "the annotation " + std::string(key) + " has a value of " +
           std::to_string(value.size()) + " bytes, more than the " +
           std::to_string(SCHEDPLUG_POD_PATCH_VALUE_MAX) +
           " a pre_bind() may set";
  }
  if (!is_valid_utf8(value)) {
    return "the annotation " + std::string(key) +
           " has a value that is not valid UTF-8";
  }
  return {};
}

// ---------------------------------------------------------------------------
// The pod patch of one pre_bind() call.

// Owns the schedplug_pod_patch handed to pre_bind() and what it recorded:
// each set_* checks the entry (pod_label_problem, pod_annotation_problem,
// at most SCHEDPLUG_POD_PATCH_MAX distinct entries) and records it, or
// returns ERROR recording nothing, keeping the first refusal's sentence.
// Thread-safe (a plugin may set from threads of its own during the call).
// Not copyable: the struct points at it.
class PodPatchRecorder {
 public:
  PodPatchRecorder() {
    patch_.struct_size = sizeof(patch_);
    patch_.context = this;
    patch_.set_annotation = &PodPatchRecorder::set_annotation;
    patch_.set_label = &PodPatchRecorder::set_label;
  }
  PodPatchRecorder(const PodPatchRecorder&) = delete;
  PodPatchRecorder& operator=(const PodPatchRecorder&) = delete;

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
    auto* self = static_cast<PodPatchRecorder*>(context);
    const std::string_view k(key.data, key.len), v(value.data, value.len);
    return self->put(self->labels_, k, v, pod_label_problem(k, v));
  }
  static schedplug_code set_annotation(void* context, schedplug_str key,
                                       schedplug_str value) {
    auto* self = static_cast<PodPatchRecorder*>(context);
    const std::string_view k(key.data, key.len), v(value.data, value.len);
    return self->put(self->annotations_, k, v, pod_annotation_problem(k, v));
  }
  schedplug_code put(std::map<std::string, std::string>& into,
                     std::string_view key, std::string_view value,
                     std::string problem) {
    std::lock_guard lock(mu_);
    if (problem.empty() && into.find(std::string(key)) == into.end() &&
        labels_.size() + annotations_.size() >= SCHEDPLUG_POD_PATCH_MAX) {
      problem = "setting " + valid_utf8(key) + " would make the patch hold " +
                "more than " + std::to_string(SCHEDPLUG_POD_PATCH_MAX) +
                " labels and annotations";
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
// as the host reports it: an unknown code, or SCHEDPLUG_WAIT from any hook
// but permit(), is an ERROR naming the plugin.
inline Verdict resource_hook_verdict(const std::string& plugin,
                                     const char* hook, schedplug_code code,
                                     std::string reason) {
  if (code == SCHEDPLUG_WAIT && std::string_view(hook) != "permit") {
    return {SCHEDPLUG_ERROR, "plugin " + plugin +
                                 " returned SCHEDPLUG_WAIT from " + hook +
                                 "(); only permit() may make a pod wait"};
  }
  if (code != SCHEDPLUG_WAIT && !is_known_code(code)) {
    return {SCHEDPLUG_ERROR, "plugin " + plugin +
                                 " returned the unknown status code " +
                                 std::to_string(static_cast<int>(code)) +
                                 " from " + hook + "()"};
  }
  return {code, std::move(reason)};
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

// Why pre_bind() failed: the first entry the patch refused (the host names
// the key in the pod's failure, whatever code the plugin returned), else
// the plugin's ERROR; empty when it succeeded.
inline std::string pre_bind_problem(const std::string& plugin, const Verdict& v,
                                    const PodPatchRecorder& patch) {
  if (!patch.refused().empty()) {
    return "plugin " + plugin + "'s pre_bind() wrote a pod patch the host " +
           "refused: " + patch.refused();
  }
  if (v.code == SCHEDPLUG_SUCCESS || v.code == SCHEDPLUG_SKIP) return {};
  return "plugin " + plugin + " failed pre_bind(): " +
         (v.reason.empty() ? "(no reason given)" : v.reason);
}

}  // namespace schedplug::runtime
