/* BROKEN: reports an empty name. */
#include "corpus_plugin.h"

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
