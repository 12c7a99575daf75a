/* GOOD to load, but create() fails unless the args name a "threshold":
 * the "create() failing on bad args" case. */
#include <string.h>

#include "corpus_plugin.h"

static schedplug_code create(const char* args_json, size_t args_len,
                             const schedplug_host* host, void** instance_out,
                             schedplug_reason* error) {
  (void)args_len;
  (void)host;
  *instance_out = NULL;
  if (strstr(args_json, "\"threshold\"") == NULL) {
    schedplug_reason_set(error,
                         "args.threshold is required (an integer number of "
                         "milliseconds)");
    return SCHEDPLUG_ERROR;
  }
  return SCHEDPLUG_SUCCESS;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "StrictArgs",
    .version = "1.0.0",
    .create = create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
