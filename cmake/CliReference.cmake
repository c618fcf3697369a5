# Writes the CLI reference (docs/cli.md) from the built executable's --help (run with cmake -P).
#   -DCLI=<workbench-cli> -DDOC=<docs/cli.md, whose text up to the marker line is kept> -DOUT=<file>
# Below the marker: `workbench-cli --help`, then `workbench-cli <command> --help` for every command
# listed under "Commands:" (a new command gets its section with no edit here; a command made of
# subcommands prints theirs in its own --help). The build target `cli-reference` writes
# docs/cli.md; tests/docs/test_docs writes a copy and fails when it differs from the committed one.

foreach(var CLI DOC OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CliReference.cmake: -D${var}=... is required")
  endif()
endforeach()

set(marker "<!-- generated below from workbench-cli --help: do not edit by hand -->")
file(READ ${DOC} doc)
string(FIND "${doc}" "${marker}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} has no marker line; put this line where the reference starts:\n${marker}")
endif()
string(LENGTH "${marker}" marker_length)
math(EXPR keep "${at} + ${marker_length}")
string(SUBSTRING "${doc}" 0 ${keep} text)

# --help must never start work: the timeout turns one that ignores it into a failure. The locale
# keeps the em dashes; nothing in the output depends on this machine.
function(wb_help out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C.UTF-8 ${CLI} ${ARGN} --help
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0 OR out STREQUAL "")
    message(FATAL_ERROR "cli reference: `workbench-cli ${ARGN} --help` failed (${rc}): ${err}")
  endif()
  string(REGEX REPLACE "[ \t]+\n" "\n" out "${out}")  # no trailing blanks in the committed file
  string(REGEX REPLACE "\n+$" "" out "${out}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(wb_section title help)
  set(text "${text}\n\n### ${title}\n\n```text\n${help}\n```" PARENT_SCOPE)
endfunction()

wb_help(top)
set(sections "")
set(text_top "${text}")
set(text "")
wb_section("workbench-cli" "${top}")

# "Commands:" block: "  <name>   <one-line description>" until the first blank line.
# (Semicolons and brackets would split or join CMake list items: out of the way first.)
string(REGEX REPLACE "[][;]" " " top_lines "${top}")
string(REPLACE "\n" ";" top_lines "${top_lines}")
set(in_commands OFF)
foreach(line IN LISTS top_lines)
  if(line MATCHES "^Commands:")
    set(in_commands ON)
  elseif(in_commands AND line MATCHES "^  ([a-z][a-z0-9-]*)  +")
    set(cmd ${CMAKE_MATCH_1})
    wb_help(sub ${cmd})
    wb_section("workbench-cli ${cmd}" "${sub}")
    list(APPEND sections "[${cmd}](#workbench-cli-${cmd})")
  elseif(in_commands AND line STREQUAL "")
    break()
  endif()
endforeach()

# A line of links to each command's section first.
list(JOIN sections " · " toc)
file(WRITE ${OUT} "${text_top}\n\nCommands: ${toc}${text}\n")
