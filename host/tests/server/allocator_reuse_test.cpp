// Metrics series found by instance across an address the allocator hands
// back. Its own program: it needs the allocator to give a freed block to
// the next allocation of its size, which glibc does and a sanitizer's
// allocator need not (AddressSanitizer quarantines freed blocks, and its
// size classes differ), so tools/dev/test.sh runs it in the plain build.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "host/metrics/host_metrics.hpp"
#include "host/plugin/plugin_instance.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

// Series are found by instance: a reload frees instances, and the
// allocator hands a freed instance's address to the next one. A new
// instance of another plugin at that address must be counted as itself,
// never as the instance the metrics were built with.
TEST(Metrics, AnInstanceAtAFreedAddressIsCountedAsItself) {
  const auto library = [](const char* so) {
    return load_plugin_file(test_plugin_dir() / so);
  };
  auto first = PluginInstance::create(library("label_filter.so"), "{}");
  const PluginInstance* freed = first.get();
  const PluginInstance* const created[] = {freed};
  HostMetrics metrics(created);
  first.reset();
  // glibc gives a freed block back to the next allocation of its size.
  std::vector<std::unique_ptr<PluginInstance>> made;
  while (made.size() < 16 && (made.empty() || made.back().get() != freed)) {
    made.push_back(PluginInstance::create(library("free_cpu.so"), "{}"));
  }
  ASSERT_EQ(made.back().get(), freed)
      << "no new instance took the freed address; the test shows nothing";
  PluginRun run;
  run.plugin = made.back().get();
  run.calls = 7;
  metrics.plugin_ran(run, "filter");
  const std::string text = metrics.text();
  EXPECT_NE(text.find("schedplug_plugin_calls_total{extension_point="
                      "\"filter\",plugin=\"FreeCpu\"} 7"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("plugin=\"LabelFilter\"} 7"), std::string::npos) << text;
}

}  // namespace
}  // namespace schedplug::host::testing
