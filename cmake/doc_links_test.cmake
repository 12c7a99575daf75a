# Every reference in the repository's docs and source comments resolves:
#   - Markdown links [text](target) in every *.md file, outside fenced code
#     blocks: a relative target must name a file or directory that exists,
#     relative to the Markdown file (a "#fragment" is not checked against
#     the headings); web links are not fetched (no network in tests);
#   - repository paths named in source files (C, C++, Go, CMake, shell,
#     YAML, proto, text), such as docs/check.md or sdk/include/schedplug/plugin.h:
#     each must exist relative to the repository root (or, as CMake files
#     name their own files, to the file's directory); a bare upper-case
#     document name (NAME.md) must exist at the root or beside the file, so
#     no file cites a document the repository does not have.
# Run by CTest as: cmake -DROOT=<repository> -P doc_links_test.cmake
# Prints every broken reference as FILE:LINE: TARGET and fails if any.

set(skip_dirs "/\\.git/|/build[^/]*/|/node_modules/|/third_party/")
set(top_dirs "cmake|config|docs|fuzz|host|integration|plugins|proto|sdk|tools")
set(broken "")

# The lines of `file` as a list; ";" (CMake's list separator) becomes ",".
function(read_lines file out)
  file(READ ${file} text)
  string(REPLACE ";" "," text "${text}")
  # "[" and "]" would group list items: [text](target) becomes (text)(target).
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(report file line target why)
  file(RELATIVE_PATH rel ${ROOT} ${file})
  set(broken "${broken}  ${rel}:${line}: ${target} (${why})\n" PARENT_SCOPE)
endfunction()

# 1. Markdown links.
file(GLOB_RECURSE md_files ${ROOT}/*.md)
list(FILTER md_files EXCLUDE REGEX "${skip_dirs}")
foreach(md ${md_files})
  get_filename_component(dir ${md} DIRECTORY)
  read_lines(${md} lines)
  set(n 0)
  set(in_code OFF)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "^[ \t]*```")
      if(in_code)
        set(in_code OFF)
      else()
        set(in_code ON)
      endif()
      continue()
    endif()
    if(in_code)
      continue()
    endif()
    string(REGEX MATCHALL "\\)\\([^) ]+\\)" links "${line}")
    foreach(link ${links})
      string(REGEX REPLACE "^\\)\\(([^) ]+)\\)$" "\\1" target "${link}")
      if(target MATCHES "^(https?|mailto|ftp):" OR target MATCHES "^#")
        continue()
      endif()
      string(REGEX REPLACE "#.*$" "" path "${target}")
      if(path STREQUAL "")
        continue()
      endif()
      if(IS_ABSOLUTE "${path}")
        report(${md} ${n} "${target}" "absolute paths do not resolve in a clone")
      elseif(NOT EXISTS "${dir}/${path}")
        report(${md} ${n} "${target}" "no such file or directory")
      endif()
    endforeach()
  endforeach()
endforeach()

# 2. Repository paths in source files and scripts.
set(source_globs)
foreach(ext c h cpp hpp inc go cmake sh yaml yml proto txt)
  list(APPEND source_globs ${ROOT}/*.${ext})
endforeach()
file(GLOB_RECURSE sources ${source_globs})
list(FILTER sources EXCLUDE REGEX "${skip_dirs}")
list(REMOVE_ITEM sources ${CMAKE_CURRENT_LIST_FILE})
foreach(src ${sources})
  get_filename_component(dir ${src} DIRECTORY)
  read_lines(${src} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    set(exts "md|hpp|h|inc|cpp|cmake|c|go|sh|yaml|yml|proto|map|in")
    string(REGEX MATCHALL
      "(^|[^A-Za-z0-9_./$-])(${top_dirs})/[A-Za-z0-9_./-]*[A-Za-z0-9_]\\.(${exts})([^A-Za-z0-9_]|$)"
      refs "${line}")
    foreach(ref ${refs})
      string(REGEX MATCH
        "((${top_dirs})/[A-Za-z0-9_./-]*[A-Za-z0-9_]\\.(${exts}))([^A-Za-z0-9_]|$)"
        ignored "${ref}")
      set(path "${CMAKE_MATCH_1}")
      if(NOT EXISTS "${ROOT}/${path}" AND NOT EXISTS "${dir}/${path}")
        report(${src} ${n} "${path}" "no such file in the repository")
      endif()
    endforeach()
    # Bare document names (README.md, ...): at the root or beside the file.
    string(REGEX MATCHALL "(^|[^A-Za-z0-9_./-])[A-Z][A-Z_]*\\.md" docs "${line}")
    foreach(doc ${docs})
      string(REGEX REPLACE "^[^A-Z]" "" doc "${doc}")
      if(NOT EXISTS "${ROOT}/${doc}" AND NOT EXISTS "${dir}/${doc}")
        report(${src} ${n} "${doc}" "not in the repository")
      endif()
    endforeach()
  endforeach()
endforeach()

if(broken)
  message(FATAL_ERROR "references that do not resolve:\n${broken}"
                      "fix the path, or drop the reference")
endif()
list(LENGTH md_files md_count)
list(LENGTH sources source_count)
message(STATUS "links and file references resolve (${md_count} Markdown files, ${source_count} sources)")
