/* BROKEN: reports ABI version 0, older than the host. */
#include "corpus_plugin.h"

static const schedplug_plugin kPlugin = {
    .abi_version = 0,
    .struct_size = sizeof(schedplug_plugin),
    .name = "AbiOlder",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
