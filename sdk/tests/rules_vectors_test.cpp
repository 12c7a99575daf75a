// The host's rules for descriptors and settings (runtime::accept_descriptor,
// runtime::settings_problem) on the shared test vectors of proto/testdata,
// which the Rust kit checks too: a kit that drifts from the host fails there.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schedplug/runtime.hpp"

namespace {

using nlohmann::json;

json read_vectors(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  return json::parse(in).at("vectors");
}

// Hooks the vectors set; never called.
schedplug_code create_hook(const char*, uint64_t, const schedplug_host*, void**,
                           schedplug_reason*) {
  return SCHEDPLUG_ERROR;
}
schedplug_code score_hook(void*, const schedplug_pod*, const schedplug_node*,
                          int64_t*, schedplug_reason*) {
  return SCHEDPLUG_ERROR;
}
schedplug_code normalize_hook(void*, const schedplug_pod*,
                              schedplug_node_score*, uint64_t,
                              schedplug_reason*) {
  return SCHEDPLUG_ERROR;
}
schedplug_code refresh_hook(void*, schedplug_reason*) {
  return SCHEDPLUG_ERROR;
}

// Text as a vector gives it: a string, or {"hex": bytes}. Kept alive in
// `store` (a deque keeps its elements in place).
std::string bytes_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  const std::string hex = v.at("hex");
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

const char* text_of(const json& v, std::deque<std::string>& store) {
  if (v.is_null()) return nullptr;
  return store.emplace_back(bytes_of(v)).c_str();
}

void set_hooks(const json& hooks, schedplug_plugin& d) {
  for (const std::string h : hooks) {
    if (h == "create") {
      d.create = create_hook;
    } else if (h == "score") {
      d.score = score_hook;
    } else if (h == "normalize_score") {
      d.normalize_score = normalize_hook;
    } else if (h == "refresh") {
      d.refresh = refresh_hook;
    } else {
      ADD_FAILURE() << "unknown hook " << h;
    }
  }
}

TEST(RulesVectors, DescriptorAcceptance) {
  const json vectors = read_vectors(SCHEDPLUG_DESCRIPTOR_VECTORS);
  ASSERT_GE(vectors.size(), 15u);
  for (const json& v : vectors) {
    const std::string name = v.at("name");
    std::deque<std::string> store;
    schedplug_plugin d{};
    schedplug_plugin out{};
    const json& in = v.at("descriptor");
    const schedplug_plugin* entry = nullptr;
    if (!in.is_null()) {
      d.abi_version = in.value("abi_version", SCHEDPLUG_ABI_VERSION);
      d.struct_size = sizeof(schedplug_plugin);
      if (in.contains("struct_size")) {
        d.struct_size = in.at("struct_size") == "v1"
                            ? schedplug::runtime::kV1DescriptorSize
                            : in.at("struct_size").get<uint32_t>();
      }
      d.name = text_of(in.at("name"), store);
      d.version = text_of(in.at("version"), store);
      set_hooks(in.at("hooks"), d);
      d.normalize_policy = in.value("normalize_policy", 0u);
      d.refresh_period_ms = in.value("refresh_period_ms", 0u);
      entry = &d;
    }
    EXPECT_EQ(schedplug::runtime::accept_descriptor(entry, out),
              v.at("error").get<std::string>())
        << name;
  }
}

uint64_t hints_of(const json& hints) {
  uint64_t bits = 0;
  for (const json& h : hints) {
    if (h.is_number()) {
      bits |= h.get<uint64_t>();
    } else if (h == "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS") {
      bits |= SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS;
    } else if (h == "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY") {
      bits |= SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
    } else if (h == "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS") {
      bits |= SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
    } else if (h == "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY") {
      bits |= SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
    } else {
      ADD_FAILURE() << "unknown hint " << h;
    }
  }
  return bits;
}

// A key list as a vector gives it: the views (nullptr for null) and the
// count (the list's length unless `count_field` says otherwise).
struct KeyList {
  std::deque<std::string> bytes;
  std::vector<schedplug_str> views;
  const schedplug_str* data = nullptr;
  uint64_t count = 0;
};

void read_keys(const json& s, const char* field, const char* count_field,
               KeyList& out) {
  if (s.contains(field) && !s.at(field).is_null()) {
    for (const json& k : s.at(field)) {
      if (k.is_object() && k.contains("null_data_len")) {
        out.views.push_back({nullptr, k.at("null_data_len").get<uint64_t>()});
        continue;
      }
      const std::string& b = out.bytes.emplace_back(bytes_of(k));
      out.views.push_back({b.data(), b.size()});
    }
    out.data = out.views.data();
    out.count = out.views.size();
  }
  out.count = s.value(count_field, out.count);
}

TEST(RulesVectors, Settings) {
  const json vectors = read_vectors(SCHEDPLUG_SETTINGS_VECTORS);
  ASSERT_GE(vectors.size(), 15u);
  for (const json& v : vectors) {
    const std::string name = v.at("name");
    schedplug_plugin d{};
    d.create = create_hook;
    set_hooks(v.at("hooks"), d);
    const json& in = v.at("settings");
    schedplug_settings s = schedplug::runtime::initial_settings(d);
    s.normalize_policy = in.value("normalize_policy", 0u);
    s.refresh_period_ms = in.value("refresh_period_ms", 0u);
    s.data = in.value("data", uint64_t{0});
    s.events = in.value("events", uint64_t{0});
    s.hints = hints_of(in.value("hints", json::array()));
    KeyList labels, annotations;
    read_keys(in, "pod_label_keys", "pod_label_key_count", labels);
    read_keys(in, "pod_annotation_keys", "pod_annotation_key_count",
              annotations);
    s.pod_label_keys = labels.data;
    s.pod_label_key_count = labels.count;
    s.pod_annotation_keys = annotations.data;
    s.pod_annotation_key_count = annotations.count;
    EXPECT_EQ(schedplug::runtime::settings_problem(d, s),
              v.at("error").get<std::string>())
        << name;
  }
}

}  // namespace
