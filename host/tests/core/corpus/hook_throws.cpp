// Loads and creates fine, but its filter throws a std::exception and its
// score throws an int through the C ABI.
#include <stdexcept>

extern "C" {
#include "corpus_plugin.h"
}

namespace {

schedplug_code filter(void*, const schedplug_pod*, const schedplug_node*,
                      schedplug_reason*) {
  throw std::runtime_error("boom in filter");
}

schedplug_code score(void*, const schedplug_pod*, const schedplug_node*,
                     int64_t*, schedplug_reason*) {
  throw 42;
}

const schedplug_plugin kPlugin = [] {
  schedplug_plugin p{};
  p.abi_version = SCHEDPLUG_ABI_VERSION;
  p.struct_size = sizeof(schedplug_plugin);
  p.name = "HookThrows";
  p.version = "1.0.0";
  p.create = corpus_create;
  p.filter = filter;
  p.score = score;
  p.normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR;
  return p;
}();

}  // namespace

extern "C" CORPUS_EXPORT(kPlugin)
