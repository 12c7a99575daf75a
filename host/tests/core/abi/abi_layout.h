/* One entry of an ABI layout table (abi_layout.c). */
#ifndef SCHEDPLUG_TESTS_ABI_LAYOUT_H
#define SCHEDPLUG_TESTS_ABI_LAYOUT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abi_layout_entry {
  const char* what;
  unsigned long long value;
} abi_layout_entry;

/* Terminated by an entry whose `what` is NULL. */
extern const abi_layout_entry abi_layout_v1_0[];
extern const abi_layout_entry abi_layout_current[];

#ifdef __cplusplus
}
#endif

#endif
