# schedplug_add_cargo_plugin(TARGET CRATE DIR LIB NAME OUTPUT FILE)
#
# Builds the Rust plugin crate in DIR with cargo (release, offline, warnings
# as errors, CARGO_TARGET_DIR=<build>/rust-plugins) and copies its
# lib<NAME>.so to FILE, the name the host loads it by. TARGET is a custom
# target in ALL, with FILE in its PLUGIN_FILE property. The caller checks
# CARGO_EXECUTABLE first.
function(schedplug_add_cargo_plugin target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CRATE;LIB;OUTPUT" "")
  set(target_dir ${CMAKE_BINARY_DIR}/rust-plugins)
  get_filename_component(out_dir ${arg_OUTPUT} DIRECTORY)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS
       ${arg_CRATE}/src/*.rs ${PROJECT_SOURCE_DIR}/sdk/rust/schedplug/src/*.rs)
  add_custom_command(
    OUTPUT ${arg_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E env CARGO_TARGET_DIR=${target_dir} RUSTFLAGS=-Dwarnings
            ${CARGO_EXECUTABLE} build --release --offline --quiet
            --manifest-path ${arg_CRATE}/Cargo.toml
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${CMAKE_COMMAND} -E copy ${target_dir}/release/lib${arg_LIB}.so ${arg_OUTPUT}
    DEPENDS ${arg_CRATE}/Cargo.toml ${PROJECT_SOURCE_DIR}/sdk/rust/schedplug/Cargo.toml ${sources}
    COMMENT "cargo build --release: ${arg_CRATE} -> ${arg_OUTPUT}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${arg_OUTPUT})
  set_target_properties(${target} PROPERTIES PLUGIN_FILE ${arg_OUTPUT})
endfunction()
