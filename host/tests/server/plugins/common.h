/* Small helpers shared by the test plugins (C, against plugin.h only). */
#ifndef SCHEDPLUG_TEST_PLUGIN_COMMON_H
#define SCHEDPLUG_TEST_PLUGIN_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedplug/plugin.h"

/* The integer value of "key": N in a flat JSON object, or `fallback`. */
static inline long test_json_int(const char* json, const char* key,
                                 long fallback) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char* at = strstr(json, pattern);
  if (at == NULL) return fallback;
  return strtol(at + strlen(pattern), NULL, 10);
}

/* 1 when "key":"value" appears in a flat JSON object. */
static inline int test_json_has(const char* json, const char* key,
                                const char* value) {
  char pattern[128];
  snprintf(pattern, sizeof pattern, "\"%s\":\"%s\"", key, value);
  return strstr(json, pattern) != NULL;
}

/* Copies the string value of "key":"..." in a flat JSON object (no escapes)
 * into out; an empty string when absent or too long. */
static inline void test_json_str(const char* json, const char* key, char* out,
                                 size_t size) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  out[0] = '\0';
  const char* at = strstr(json, pattern);
  if (at == NULL) return;
  at += strlen(pattern);
  const char* end = strchr(at, '"');
  if (end == NULL || (size_t)(end - at) >= size) return;
  memcpy(out, at, (size_t)(end - at));
  out[end - at] = '\0';
}

/* FNV-1a of a string view: a stable pseudo-random value per node. */
static inline unsigned long long test_hash(schedplug_str s) {
  unsigned long long h = 1469598103934665603ull;
  for (size_t i = 0; i < s.len; ++i) {
    h ^= (unsigned char)s.data[i];
    h *= 1099511628211ull;
  }
  return h;
}

#endif
