// BROKEN: defines the entry function without extern "C", so its symbol is
// C++-mangled and the host finds no `schedplug_plugin_v1`.
#include "schedplug/plugin.h"

namespace {
const schedplug_plugin kPlugin = [] {
  schedplug_plugin p{};
  p.abi_version = SCHEDPLUG_ABI_VERSION;
  p.struct_size = sizeof(schedplug_plugin);
  p.name = "NoEntry";
  p.version = "1.0.0";
  return p;
}();
}  // namespace

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1();
SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1() {
  return &kPlugin;
}
