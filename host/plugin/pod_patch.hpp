// The labels and annotations one plugin's pre_bind() asks to set on the
// pod (plugin.h v1.6, schedplug_pod_patch): each entry checked as the API
// server would check it, so that the scheduler's patch of the pod cannot
// fail on what a plugin wrote.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"

namespace schedplug::host {

// Why `key` is not a Kubernetes qualified name (a label or annotation
// key: an optional DNS subdomain prefix and '/', then a name of at most
// 63 characters, alphanumeric at both ends, '-', '_' and '.' inside);
// "" when it is one.
std::string qualified_name_problem(std::string_view key);
// Why `value` is not a valid label value (at most 63 characters, empty or
// alphanumeric at both ends, '-', '_' and '.' inside); "" when it is one.
std::string label_value_problem(std::string_view value);

class PodPatch {
 public:
  using Entries = std::vector<std::pair<std::string, std::string>>;

  PodPatch();
  PodPatch(const PodPatch&) = delete;
  PodPatch& operator=(const PodPatch&) = delete;

  // What pre_bind() receives; valid while this object lives.
  schedplug_pod_patch* abi() { return &abi_; }

  // In the order first set; a key set twice keeps its last value.
  const Entries& annotations() const { return annotations_; }
  const Entries& labels() const { return labels_; }
  // The first entry the host refused, as a sentence naming the key; ""
  // when none was.
  const std::string& refused() const { return refused_; }

  // What set_annotation / set_label do (also callable directly).
  schedplug_code set_annotation(std::string_view key, std::string_view value);
  schedplug_code set_label(std::string_view key, std::string_view value);

 private:
  schedplug_code refuse(std::string message);
  // Sets key in `entries` unless the patch is full.
  schedplug_code put(Entries& entries, const char* what, std::string_view key,
                     std::string_view value);

  schedplug_pod_patch abi_{};
  Entries annotations_;
  Entries labels_;
  std::string refused_;
};

// Sets every entry of `from` into `into`, a later value replacing an
// earlier one of the same key (the merge of several plugins' patches).
void merge_entries(PodPatch::Entries& into, const PodPatch::Entries& from);

}  // namespace schedplug::host
