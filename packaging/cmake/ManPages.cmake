# Generates man pages from the built executables' --help (run with cmake -P).
#   -DCLI=<workbench-cli> [-DGUI=<workbench>] -DHELP2MAN=<help2man> -DOUT=<dir>
#   -DEXTRA=<dir of <page>.h2m texts> -DVERSION=<x.y.z> -DSUMMARY=<text> -DSTAMP=<file>
# Writes OUT/workbench-cli.1.gz, OUT/workbench-cli-<command>.1.gz for every command listed under
# "Commands:" in `workbench-cli --help` (a new subcommand gets its page with no edit here), and
# OUT/workbench.1.gz when GUI is given. A subcommand whose --help fails gets no page and a
# warning (the build goes on): a page made from an error message would be worse than none.

foreach(var CLI HELP2MAN OUT EXTRA VERSION SUMMARY STAMP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ManPages.cmake: -D${var}=... is required")
  endif()
endforeach()

# Each program runs by its bare name from a PATH that starts with its own folder: Qt's usage line
# prints argv[0], which must read "workbench", not a path into the build tree. The GUI prints its
# --help without a display under the offscreen platform.
# OUT is ours alone and is installed whole: start it afresh so no page outlives its command.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT}/wrappers)
set(run_env ${CMAKE_COMMAND} -E env "PATH=${OUT}/wrappers:$ENV{PATH}" QT_QPA_PLATFORM=offscreen LC_ALL=C.UTF-8)

# --help must never start work; the timeout turns one that ignores it into a failure.
function(wb_run_help out_var rc_var prog)
  execute_process(COMMAND ${run_env} ${prog} ${ARGN} --help
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 30)
  if(rc EQUAL 0 AND out STREQUAL "")
    set(rc "printed nothing on stdout")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

# A wrapper named after the page: help2man names the page after the program it runs
# (workbench-cli-run: the git-commit(1) convention).
function(wb_wrapper name target)
  set(wrapper ${OUT}/wrappers/${name})
  file(WRITE ${wrapper} "#!/bin/sh\nexec \"${target}\" ${ARGN} \"$@\"\n")
  file(CHMOD ${wrapper} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
endfunction()

wb_wrapper(workbench-cli ${CLI})
if(GUI)
  # Qt prints argv[0] in its usage line, and the wrapper would pass its full path: link instead.
  file(CREATE_LINK ${GUI} ${OUT}/wrappers/workbench SYMBOLIC)
endif()

wb_run_help(top_help rc workbench-cli)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man pages: `${CLI} --help` failed (${rc}); fix workbench-cli's usage text")
endif()

# "Commands:" block: "  <name>   <one-line description>" until the first blank line.
string(REPLACE "\n" ";" lines "${top_help}")
set(in_commands OFF)
set(pages workbench-cli)
foreach(line IN LISTS lines)
  if(line MATCHES "^Commands:")
    set(in_commands ON)
  elseif(in_commands AND line MATCHES "^  ([a-z][a-z0-9-]*)  +(.+)$")
    set(cmd ${CMAKE_MATCH_1})
    set(desc "${CMAKE_MATCH_2}")
    wb_run_help(sub_help rc workbench-cli ${cmd})
    if(rc EQUAL 0)
      list(APPEND pages workbench-cli-${cmd})
      set(desc_workbench-cli-${cmd} "${desc}")
      wb_wrapper(workbench-cli-${cmd} ${CLI} ${cmd})
    else()
      message(WARNING "man pages: no page for `workbench-cli ${cmd}`: its --help failed (${rc})")
    endif()
  elseif(in_commands AND line STREQUAL "")
    break()
  endif()
endforeach()

# NAME lines read "workbench-cli \- measure ...": lower-case like the subcommands' descriptions.
string(SUBSTRING "${SUMMARY}" 0 1 first)
string(SUBSTRING "${SUMMARY}" 1 -1 rest)
string(TOLOWER "${first}" first)
set(desc_workbench-cli "${first}${rest}")
set(desc_workbench "${first}${rest} (desktop application)")
if(GUI)
  wb_run_help(gui_help rc workbench)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man pages: `${GUI} --help` failed (${rc})")
  endif()
  list(APPEND pages workbench)
endif()

# Every page: its hand-written sections (EXTRA/<page>.h2m, when there is one), then SEE ALSO
# naming every other page.
foreach(page IN LISTS pages)
  set(include_text "")
  if(EXISTS ${EXTRA}/${page}.h2m)
    file(READ ${EXTRA}/${page}.h2m include_text)
  endif()
  set(refs "")
  foreach(other IN LISTS pages)
    if(NOT other STREQUAL page)
      list(APPEND refs ".BR ${other} (1)")
    endif()
  endforeach()
  list(JOIN refs ",\n" refs)
  file(WRITE ${OUT}/wrappers/${page}.h2m "${include_text}\n[SEE ALSO]\n${refs}\n")

  # --locale: the help texts are UTF-8 (an em dash); under the C locale help2man prints "???".
  execute_process(
    COMMAND ${run_env} ${HELP2MAN} --no-info --section=1 --locale=C.UTF-8 --name=${desc_${page}}
            --version-string=${VERSION} --include=${OUT}/wrappers/${page}.h2m --output=${OUT}/${page}.1 ${page}
    RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man pages: help2man failed for ${page}: ${err}")
  endif()
  # Debian ships man pages gzip-compressed; -n keeps the archive free of time stamps.
  execute_process(COMMAND gzip -9nf ${OUT}/${page}.1 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man pages: gzip failed for ${OUT}/${page}.1")
  endif()
endforeach()

file(WRITE ${STAMP} "${pages}\n")
