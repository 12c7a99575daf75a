# schedplug_warnings(TARGET): the warning set for schedplug's own code.
# Warnings are errors unless SCHEDPLUG_WERROR is OFF; generated code (protobuf,
# gRPC) is compiled without them.
function(schedplug_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                           -Wconversion -Wno-sign-conversion)
  if(SCHEDPLUG_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
