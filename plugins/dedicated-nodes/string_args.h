/* A small, strict reader for plugin args that are a flat JSON object of
 * strings, e.g. {"nodeLabel": "schedplug.io/dedicated"}. Plain C11, no
 * allocation other than the values it returns.
 *
 * Strict on purpose: an unknown or duplicate key, a value that is not a
 * non-empty string, or trailing text is an error whose message names the
 * arg and the byte offset, so a typo in a scheduler profile fails at start
 * instead of silently using a default. */
#ifndef SCHEDPLUG_DEDICATED_NODES_STRING_ARGS_H
#define SCHEDPLUG_DEDICATED_NODES_STRING_ARGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One arg the plugin knows. `value` starts as NULL and is set to a
 * malloc'd, NUL-terminated copy when the arg is present; free it with
 * string_args_free(). */
typedef struct string_arg {
  const char* key;
  char* value;
} string_arg;

/* Parses `json` (`len` bytes) into `args`. Returns 0 on success; otherwise
 * writes a message into `err` (capacity `err_cap`), frees any values it set,
 * and returns -1. */
int string_args_parse(const char* json, size_t len, string_arg* args,
                      size_t arg_count, char* err, size_t err_cap);

/* Frees every value and resets it to NULL. */
void string_args_free(string_arg* args, size_t arg_count);

#ifdef __cplusplus
}
#endif

#endif
