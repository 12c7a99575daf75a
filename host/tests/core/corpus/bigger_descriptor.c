/* GOOD: built against a (hypothetical) later v1 header that appended a
 * field to the descriptor. struct_size is larger than this host's
 * sizeof(schedplug_plugin); the host reads the fields it knows and ignores
 * the rest (append-only rule). */
#include "corpus_plugin.h"

typedef struct later_plugin {
  schedplug_plugin v1;
  uint64_t appended_field;
} later_plugin;

static const later_plugin kPlugin = {
    .v1 =
        {
            .abi_version = SCHEDPLUG_ABI_VERSION,
            .struct_size = sizeof(later_plugin),
            .name = "BiggerDescriptor",
            .version = "1.1.0",
            .create = corpus_create,
            .filter = corpus_pass,
            .events = SCHEDPLUG_EVENT_POD_ADD,
        },
    .appended_field = 0xdeadbeef,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &kPlugin.v1;
}
