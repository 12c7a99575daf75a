/* BROKEN: has a refresh hook but no refresh period. */
#include "corpus_plugin.h"

static schedplug_code refresh(void* instance, schedplug_reason* error) {
  (void)instance;
  (void)error;
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "RefreshNoPeriod",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
    .refresh = refresh,
};
CORPUS_EXPORT(kPlugin)
