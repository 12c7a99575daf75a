// BROKEN at run time: create() lets a C++ exception escape through the C
// ABI (a plugin written without the SDK's C++ layer).
#include <stdexcept>

extern "C" {
#include "corpus_plugin.h"
}

namespace {

schedplug_code create(const char*, size_t, const schedplug_host*, void**,
                      schedplug_reason*) {
  throw std::runtime_error("config file /etc/missing.conf not found");
}

const schedplug_plugin kPlugin = [] {
  schedplug_plugin p{};
  p.abi_version = SCHEDPLUG_ABI_VERSION;
  p.struct_size = sizeof(schedplug_plugin);
  p.name = "CreateThrows";
  p.version = "1.0.0";
  p.create = create;
  p.filter = corpus_pass;
  return p;
}();

}  // namespace

extern "C" CORPUS_EXPORT(kPlugin)
