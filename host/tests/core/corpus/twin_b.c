/* BROKEN: reports the name "Twin", as twin_a.so does. */
#include "corpus_plugin.h"

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "Twin",
    .version = "2.0.0",
    .create = corpus_create,
    .score = corpus_score_zero,
};
CORPUS_EXPORT(kPlugin)
