/* Loads and creates fine, but writes reasons that are not valid UTF-8, as
 * a plugin that cuts a quoted text at a byte (or an older SDK's helper)
 * does: filter ends its 255-byte reason with the lead byte of a cut "é",
 * and on a node named "junk" puts a stray 0xFF in the middle; score fails
 * with a reason holding both. */
#include <string.h>

#include "corpus_plugin.h"

static void write_reason(const schedplug_node* node, schedplug_reason* out) {
  static const char kJunk[] = "bad \xFF byte, then a cut \xC3";
  size_t n;
  if (node->name.len == 4 && memcmp(node->name.data, "junk", 4) == 0) {
    memcpy(out->text, kJunk, sizeof kJunk);
    return;
  }
  /* "xy", then "é" (0xC3 0xA9) up to the buffer's last byte, which holds
   * the first half of one more: 2 + 2k + 1 bytes. */
  n = (size_t)out->capacity - 1;
  out->text[0] = 'x';
  out->text[1] = 'y';
  for (size_t i = 2; i + 2 < n; i += 2) {
    out->text[i] = (char)0xC3;
    out->text[i + 1] = (char)0xA9;
  }
  out->text[n - 1] = (char)0xC3;
  out->text[n] = '\0';
}

static schedplug_code filter(void* instance, const schedplug_pod* pod,
                             const schedplug_node* node,
                             schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  write_reason(node, reason);
  return SCHEDPLUG_UNSCHEDULABLE;
}

static schedplug_code score(void* instance, const schedplug_pod* pod,
                            const schedplug_node* node, int64_t* value,
                            schedplug_reason* reason) {
  (void)instance;
  (void)pod;
  (void)value;
  write_reason(node, reason);
  return SCHEDPLUG_ERROR;
}

static const schedplug_plugin kPlugin = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "BadUtf8",
    .version = "1.0.0",
    .create = corpus_create,
    .filter = filter,
    .score = score,
    .normalize_policy = SCHEDPLUG_NORMALIZE_LINEAR,
};

CORPUS_EXPORT(kPlugin)
