/* GOOD, with a side effect: its constructor (run by dlopen, before any
 * check the host does after loading) creates the file named by the
 * SCHEDPLUG_TEST_MARKER environment variable. Tests use it to show that a
 * refused file was never opened. */
#include <stdio.h>
#include <stdlib.h>

#include "corpus_plugin.h"

__attribute__((constructor)) static void leave_marker(void) {
  const char* path = getenv("SCHEDPLUG_TEST_MARKER");
  if (path == NULL) return;
  FILE* f = fopen(path, "w");
  if (f != NULL) {
    fputs("constructor ran\n", f);
    fclose(f);
  }
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "CtorMarker",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = corpus_pass,
};
CORPUS_EXPORT(kPlugin)
