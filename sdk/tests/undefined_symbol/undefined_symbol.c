/* Calls a function that is declared but defined nowhere. */
#include <schedplug/plugin.h>

int schedplug_test_function_defined_nowhere(void);

static schedplug_code create(const char* args, size_t len,
                             const schedplug_host* host, void** instance,
                             schedplug_reason* error) {
  (void)args;
  (void)len;
  (void)host;
  (void)error;
  *instance = NULL;
  return schedplug_test_function_defined_nowhere() ? SCHEDPLUG_SUCCESS
                                                   : SCHEDPLUG_ERROR;
}

static const schedplug_plugin descriptor = {
    .abi_version = SCHEDPLUG_ABI_VERSION,
    .struct_size = sizeof(schedplug_plugin),
    .name = "UndefinedSymbol",
    .version = "0.0.0",
    .create = create,
};

SCHEDPLUG_EXPORT const schedplug_plugin* schedplug_plugin_v1(void) {
  return &descriptor;
}
