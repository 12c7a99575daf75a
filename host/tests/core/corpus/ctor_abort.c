/* BROKEN: its constructor calls abort(), so merely opening it with dlopen
 * kills the process. `schedplug check` and `inspect` must report it (they
 * load plugins in a child process) instead of crashing. */
#include <stdlib.h>

#include "corpus_plugin.h"

__attribute__((constructor)) static void crash_on_load(void) { abort(); }

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "CtorAbort",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
