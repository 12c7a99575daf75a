/* The layout of ABI v1.0's structs as the header this file is compiled
 * against sees it: one table per build (ABI_LAYOUT_TABLE names it). */
#include <stddef.h>

#include "abi_layout.h"
#include "schedplug/plugin.h"

#define LAYOUT_FIELD(type, field)                      \
  {#type "." #field " offset", offsetof(type, field)}, \
      {#type "." #field " size", sizeof(((type*)0)->field)},
#define LAYOUT_SIZE(type) {"sizeof " #type, sizeof(type)},
/* v1.0's enums were 32-bit with values 0..5 (their signedness was up to
 * the compiler); v1.1's integers have the same size and values. */
#define LAYOUT_TYPE(type) {"sizeof " #type, sizeof(type)},
#define LAYOUT_VALUE(name) {#name, (unsigned long long)(name)},

const abi_layout_entry ABI_LAYOUT_TABLE[] = {
#include "abi_layout_fields.inc"
    {NULL, 0}};
