# cmake -DREADME=<readme> -DFILE=<file> -P readme_copy_test.cmake
# Fails unless <readme> contains <file> verbatim (a docs example that runs).
file(READ ${README} readme)
file(READ ${FILE} text)
string(FIND "${readme}" "${text}" at)
if(at EQUAL -1)
  get_filename_component(name ${FILE} NAME)
  message(FATAL_ERROR "${README}'s copy of ${name} is out of date; paste "
                      "the file in again")
endif()
