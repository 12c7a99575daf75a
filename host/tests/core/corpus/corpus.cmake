# schedplug_corpus_plugin(TARGET SOURCE OUTPUT_DIR OUTPUT_NAME)
# Builds one corpus plugin source as a MODULE library OUTPUT_DIR/OUTPUT_NAME.so
# the way plugin authors should: hidden visibility, no "lib" prefix.
function(schedplug_corpus_plugin target source output_dir output_name)
  add_library(${target} MODULE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${source})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../../../sdk/include)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME ${output_name}
    LIBRARY_OUTPUT_DIRECTORY ${output_dir}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden)
  schedplug_warnings(${target})
endfunction()
