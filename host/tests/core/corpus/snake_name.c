/* BROKEN: reports a name that is not UpperCamelCase. */
#include "corpus_plugin.h"

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "network_latency",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
