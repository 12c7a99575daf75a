/* BROKEN: reports the name "Twin", as twin_b.so does. */
#include "corpus_plugin.h"

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "Twin",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
