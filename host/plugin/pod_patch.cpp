#include "host/plugin/pod_patch.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "schedplug/runtime.hpp"

namespace schedplug::host {
namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63 characters.
bool is_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// A DNS-1123 subdomain: lowercase labels of [a-z0-9-], alphanumeric at
// both ends, joined by '.', at most 253 characters.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('.', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view label = s.substr(start, end - start);
    if (label.empty() || label.size() > 63) return false;
    const auto lower_alnum = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(),
                     [&](char c) { return lower_alnum(c) || c == '-'; }))
      return false;
    start = end + 1;
  }
  return true;
}

// The key or value as a message shows it: valid UTF-8, cut.
std::string shown(std::string_view s) {
  std::string text = runtime::valid_utf8(s.substr(0, 80));
  if (s.size() > 80) text += "...";
  return text;
}

schedplug_code set_annotation_abi(void* context, schedplug_str key,
                                  schedplug_str value) {
  return static_cast<PodPatch*>(context)->set_annotation(
      {key.data, key.data == nullptr ? 0 : key.len},
      {value.data, value.data == nullptr ? 0 : value.len});
}

schedplug_code set_label_abi(void* context, schedplug_str key,
                             schedplug_str value) {
  return static_cast<PodPatch*>(context)->set_label(
      {key.data, key.data == nullptr ? 0 : key.len},
      {value.data, value.data == nullptr ? 0 : value.len});
}

}  // namespace

std::string qualified_name_problem(std::string_view key) {
  std::string_view name = key;
  if (const size_t slash = key.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!is_dns_subdomain(prefix)) {
      return fmt::format(
          "its prefix \"{}\" is not a DNS subdomain (lowercase letters, "
          "digits, '-' and '.', at most 253 characters)",
          shown(prefix));
    }
  }
  if (!is_name_part(name)) {
    return fmt::format(
        "its name \"{}\" is not a qualified name (1 to 63 characters: "
        "letters, digits, '-', '_' and '.', beginning and ending with a "
        "letter or digit)",
        shown(name));
  }
  return {};
}

std::string label_value_problem(std::string_view value) {
  if (value.empty() || is_name_part(value)) return {};
  return "a label value is empty or 1 to 63 characters: letters, digits, "
         "'-', '_' and '.', beginning and ending with a letter or digit";
}

PodPatch::PodPatch() {
  abi_.struct_size = sizeof(schedplug_pod_patch);
  abi_.context = this;
  abi_.set_annotation = &set_annotation_abi;
  abi_.set_label = &set_label_abi;
}

schedplug_code PodPatch::refuse(std::string message) {
  if (refused_.empty()) refused_ = std::move(message);
  return SCHEDPLUG_ERROR;
}

schedplug_code PodPatch::put(Entries& entries, const char* what,
                             std::string_view key, std::string_view value) {
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const auto& e) { return e.first == key; });
  if (it != entries.end()) {
    it->second.assign(value);
    return SCHEDPLUG_SUCCESS;
  }
  if (annotations_.size() + labels_.size() >= SCHEDPLUG_POD_PATCH_MAX) {
    return refuse(fmt::format(
        "the {} \"{}\" was refused: the patch already holds {} labels and "
        "annotations, the most one pre_bind() may set "
        "(SCHEDPLUG_POD_PATCH_MAX)",
        what, shown(key), SCHEDPLUG_POD_PATCH_MAX));
  }
  entries.emplace_back(std::string(key), std::string(value));
  return SCHEDPLUG_SUCCESS;
}

schedplug_code PodPatch::set_annotation(std::string_view key,
                                        std::string_view value) {
  if (std::string problem = qualified_name_problem(key); !problem.empty()) {
    return refuse(fmt::format("the annotation key \"{}\" was refused: {}",
                              shown(key), problem));
  }
  if (value.size() > SCHEDPLUG_POD_PATCH_VALUE_MAX) {
    return refuse(fmt::format(
        "the annotation \"{}\" was refused: its value is {} bytes, more "
        "than SCHEDPLUG_POD_PATCH_VALUE_MAX ({})",
        shown(key), value.size(), SCHEDPLUG_POD_PATCH_VALUE_MAX));
  }
  if (!runtime::is_valid_utf8(value)) {
    return refuse(fmt::format(
        "the annotation \"{}\" was refused: its value is not valid UTF-8",
        shown(key)));
  }
  return put(annotations_, "annotation", key, value);
}

schedplug_code PodPatch::set_label(std::string_view key,
                                   std::string_view value) {
  if (std::string problem = qualified_name_problem(key); !problem.empty()) {
    return refuse(fmt::format("the label key \"{}\" was refused: {}",
                              shown(key), problem));
  }
  if (std::string problem = label_value_problem(value); !problem.empty()) {
    return refuse(
        fmt::format("the label \"{}\" was refused: its value \"{}\" "
                    "is not valid ({})",
                    shown(key), shown(value), problem));
  }
  return put(labels_, "label", key, value);
}

void merge_entries(PodPatch::Entries& into, const PodPatch::Entries& from) {
  for (const auto& [key, value] : from) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const auto& e) { return e.first == key; });
    if (it != into.end()) {
      it->second = value;
    } else {
      into.emplace_back(key, value);
    }
  }
}

}  // namespace schedplug::host
