// expect: schedplug/runtime.hpp
// The host's rules are not on a plugin's include path (sdk/include): a
// plugin that reaches for them fails to compile instead of depending on
// the host's internals.
#include <schedplug/plugin.hpp>
#include <schedplug/runtime.hpp>
