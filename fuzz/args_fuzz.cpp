// Fuzz target "args": a plugin's pluginConfig args, as JSON, into create().
//
// The input is the args JSON the host hands to create(). It goes to
//   - the SDK's C++ Args (sdk/include/schedplug/plugin.hpp): parse, then
//     every getter on every key present and on absent keys;
//   - the create() and destroy() of the three sample plugins, compiled into
//     this binary: HwEncrypt and NetworkLatency (C++ SDK) and
//     DedicatedNodes (plain C; it reads args through the host's typed
//     getters, which this binary does not offer, so its create() must fail
//     with a message that says so).
// create() must return SUCCESS or ERROR with a message, never crash, throw
// or leak (LeakSanitizer runs in the fuzz build).
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include <schedplug/plugin.hpp>

#include "fuzz/fuzz_checks.hpp"

// Each sample plugin's entry point, renamed at compile time
// (fuzz/CMakeLists.txt) so three plugins fit in one binary.
extern "C" const schedplug_plugin* schedplug_fuzz_hw_encrypt(void);
extern "C" const schedplug_plugin* schedplug_fuzz_network_latency(void);
extern "C" const schedplug_plugin* schedplug_fuzz_dedicated_nodes(void);

namespace {

void ignore_log(void*, schedplug_log_level, schedplug_str) {}

void try_create(const schedplug_plugin* plugin, const std::string& json) {
  // A v1.0 host: log only. Claiming the whole struct with the typed-args
  // getters left null would make a plugin call through null pointers.
  schedplug_host host{};
  host.struct_size = offsetof(schedplug_host, args);
  host.log = ignore_log;
  void* instance = nullptr;
  char text[512] = {};
  schedplug_reason error{text, sizeof text};
  const schedplug_code code =
      plugin->create(json.c_str(), json.size(), &host, &instance, &error);
  if (code == SCHEDPLUG_SUCCESS) {
    if (plugin->destroy != nullptr) plugin->destroy(instance);
    return;
  }
  SCHEDPLUG_FUZZ_CHECK(code == SCHEDPLUG_ERROR,
                       std::string(plugin->name) + ": create() code");
  SCHEDPLUG_FUZZ_CHECK(text[0] != '\0', std::string(plugin->name) +
                                            ": create() failed silently");
  SCHEDPLUG_FUZZ_CHECK(
      instance == nullptr || plugin->destroy == nullptr,
      std::string(plugin->name) + ": create() failed but stored an instance");
}

void every_getter(const schedplug::Args& args, const std::string& key) {
  auto quiet = [](auto&& call) {
    try {
      call();
    } catch (const schedplug::ArgsError& e) {
      SCHEDPLUG_FUZZ_CHECK(std::strlen(e.what()) > 0, "empty ArgsError");
    }
  };
  quiet([&] { (void)args.string(key, "fallback"); });
  quiet([&] { (void)args.required_string(key); });
  quiet([&] { (void)args.number(key, 1.5, -1e300, 1e300); });
  quiet([&] { (void)args.number(key, 0, 0, 0); });
  quiet([&] { (void)args.integer(key, 7, INT64_MIN, INT64_MAX); });
  quiet([&] { (void)args.integer(key, 0, -5, 5); });
  quiet([&] { (void)args.boolean(key, true); });
  quiet([&] { (void)args.duration(key, std::chrono::seconds(1)); });
  quiet([&] { (void)args.string_list(key); });
  quiet([&] { (void)args.object(key).allow_only({"a"}); });
  (void)args.has(key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);

  try {
    const schedplug::Args args = schedplug::Args::parse(json);
    for (const auto& [key, value] : args.json().items())
      every_getter(args, key);
    every_getter(args, "absent");
    try {
      args.allow_only({"podAnnotation", "nodeLabel"});
    } catch (const schedplug::ArgsError&) {
    }
    try {
      args.allow_only({});
    } catch (const schedplug::ArgsError&) {
    }
  } catch (const schedplug::ArgsError&) {
  }

  for (const schedplug_plugin* plugin :
       {schedplug_fuzz_hw_encrypt(), schedplug_fuzz_network_latency(),
        schedplug_fuzz_dedicated_nodes()}) {
    try_create(plugin, json);
  }
  return 0;
}
