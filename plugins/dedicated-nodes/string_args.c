#include "string_args.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
  const char* s;
  size_t len;
  size_t pos;
  char* err;
  size_t err_cap;
} reader;

static int fail(reader* r, const char* fmt, ...) {
  if (r->err != NULL && r->err_cap > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->err_cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static void skip_space(reader* r) {
  while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
                             r->s[r->pos] == '\n' || r->s[r->pos] == '\r')) {
    r->pos++;
  }
}

/* The JSON type that starts at the current byte, for error messages. */
static const char* kind_here(const reader* r) {
  if (r->pos >= r->len) return "the end of the text";
  switch (r->s[r->pos]) {
    case '"':
      return "a string";
    case '{':
      return "an object";
    case '[':
      return "an array";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    default:
      return (r->s[r->pos] == '-' || isdigit((unsigned char)r->s[r->pos]))
                 ? "a number"
                 : "an invalid value";
  }
}

static int hex4(reader* r, unsigned* out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    if (r->pos >= r->len) return -1;
    char c = r->s[r->pos++];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return -1;
  }
  *out = v;
  return 0;
}

static size_t put_utf8(char* out, unsigned cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Reads a string at r->pos (which is at '"') into a malloc'd buffer. The
 * decoded text is never longer than the escaped text, so one allocation of
 * the remaining length is enough. */
static int read_string(reader* r, char** out) {
  size_t start = r->pos;
  r->pos++; /* the opening quote */
  char* buf = malloc(r->len - r->pos + 1);
  if (buf == NULL) return fail(r, "out of memory reading args");
  size_t n = 0;
  for (;;) {
    if (r->pos >= r->len) {
      free(buf);
      return fail(r, "string starting at byte %zu is not closed", start);
    }
    unsigned char c = (unsigned char)r->s[r->pos++];
    if (c == '"') break;
    if (c < 0x20) {
      free(buf);
      return fail(r, "control character in string at byte %zu; escape it",
                  r->pos - 1);
    }
    if (c != '\\') {
      buf[n++] = (char)c;
      continue;
    }
    if (r->pos >= r->len) continue; /* reported as "not closed" */
    char e = r->s[r->pos++];
    switch (e) {
      case '"':
      case '\\':
      case '/':
        buf[n++] = e;
        break;
      case 'b':
        buf[n++] = '\b';
        break;
      case 'f':
        buf[n++] = '\f';
        break;
      case 'n':
        buf[n++] = '\n';
        break;
      case 'r':
        buf[n++] = '\r';
        break;
      case 't':
        buf[n++] = '\t';
        break;
      case 'u': {
        size_t at = r->pos - 2;
        unsigned cp;
        if (hex4(r, &cp) != 0) {
          free(buf);
          return fail(r, "bad \\u escape at byte %zu", at);
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* high surrogate: need a low */
          unsigned lo;
          if (r->pos + 1 >= r->len || r->s[r->pos] != '\\' ||
              r->s[r->pos + 1] != 'u' || (r->pos += 2, hex4(r, &lo) != 0) ||
              lo < 0xDC00 || lo > 0xDFFF) {
            free(buf);
            return fail(r, "unpaired surrogate in \\u escape at byte %zu", at);
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          free(buf);
          return fail(r, "unpaired surrogate in \\u escape at byte %zu", at);
        }
        if (cp == 0) {
          free(buf);
          return fail(r, "\\u0000 at byte %zu: strings must not contain NUL",
                      at);
        }
        n += put_utf8(buf + n, cp);
        break;
      }
      default:
        free(buf);
        return fail(r, "unknown escape \\%c at byte %zu", e, r->pos - 2);
    }
  }
  buf[n] = '\0';
  *out = buf;
  return 0;
}

static int equal_ignoring_case(const char* a, const char* b) {
  for (; *a != '\0' && *b != '\0'; a++, b++) {
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  }
  return *a == *b;
}

static int unknown_key(reader* r, const char* key, const string_arg* args,
                       size_t arg_count) {
  for (size_t i = 0; i < arg_count; i++) {
    if (equal_ignoring_case(key, args[i].key)) {
      return fail(r,
                  "unknown arg \"%s\"; did you mean \"%s\"? arg names are "
                  "case-sensitive",
                  key, args[i].key);
    }
  }
  char known[192] = "";
  for (size_t i = 0; i < arg_count; i++) {
    size_t used = strlen(known);
    snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
             args[i].key);
  }
  return fail(r, "unknown arg \"%s\"; known args: %s", key, known);
}

static int parse_object(reader* r, string_arg* args, size_t arg_count) {
  skip_space(r);
  if (r->pos >= r->len || r->s[r->pos] != '{') {
    return fail(r, "args must be a JSON object, got %s", kind_here(r));
  }
  r->pos++;
  skip_space(r);
  if (r->pos < r->len && r->s[r->pos] == '}') {
    r->pos++;
    return 0;
  }
  for (;;) {
    skip_space(r);
    if (r->pos >= r->len || r->s[r->pos] != '"') {
      return fail(r, "expected an arg name in quotes at byte %zu", r->pos);
    }
    char* key = NULL;
    if (read_string(r, &key) != 0) return -1;
    string_arg* arg = NULL;
    for (size_t i = 0; i < arg_count; i++) {
      if (strcmp(args[i].key, key) == 0) arg = &args[i];
    }
    if (arg == NULL) {
      unknown_key(r, key, args, arg_count);
      free(key);
      return -1;
    }
    free(key);
    if (arg->value != NULL) {
      return fail(r, "arg \"%s\" is given twice", arg->key);
    }
    skip_space(r);
    if (r->pos >= r->len || r->s[r->pos] != ':') {
      return fail(r, "expected ':' after arg \"%s\" at byte %zu", arg->key,
                  r->pos);
    }
    r->pos++;
    skip_space(r);
    if (r->pos >= r->len || r->s[r->pos] != '"') {
      return fail(r, "arg \"%s\" must be a non-empty string, got %s", arg->key,
                  kind_here(r));
    }
    if (read_string(r, &arg->value) != 0) return -1;
    if (arg->value[0] == '\0') {
      return fail(r, "arg \"%s\" must be a non-empty string, got \"\"",
                  arg->key);
    }
    skip_space(r);
    if (r->pos < r->len && r->s[r->pos] == ',') {
      r->pos++;
      continue;
    }
    if (r->pos < r->len && r->s[r->pos] == '}') {
      r->pos++;
      return 0;
    }
    return fail(r, "expected ',' or '}' at byte %zu", r->pos);
  }
}

int string_args_parse(const char* json, size_t len, string_arg* args,
                      size_t arg_count, char* err, size_t err_cap) {
  reader r = {json, json == NULL ? 0 : len, 0, err, err_cap};
  int rc = parse_object(&r, args, arg_count);
  if (rc == 0) {
    skip_space(&r);
    if (r.pos != r.len) {
      rc = fail(&r, "unexpected text after the args object at byte %zu", r.pos);
    }
  }
  if (rc != 0) string_args_free(args, arg_count);
  return rc;
}

void string_args_free(string_arg* args, size_t arg_count) {
  for (size_t i = 0; i < arg_count; i++) {
    free(args[i].value);
    args[i].value = NULL;
  }
}
