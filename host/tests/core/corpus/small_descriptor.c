/* BROKEN: struct_size is smaller than ABI v1's descriptor. */
#include "corpus_plugin.h"

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    /* As if built against a header that lacked the trailing `events`. */
    .struct_size = (uint32_t)offsetof(schedplug_plugin, events),
    .name = "SmallDescriptor",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
