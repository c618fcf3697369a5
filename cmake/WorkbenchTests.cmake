# wb_add_test(test_name SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s] [GUI] [TORCH] [NO_CLI])
# TORCH: the test includes LibTorch; it reuses the precompiled <torch/torch.h>.
# NO_CLI: the test never runs workbench-cli (no WB_CLI_PATH, no dependency on building it).
# A Qt Test executable registered with CTest. Non-GUI tests should use QTEST_APPLESS_MAIN.
# Tests run with WB_RUNS_ROOT and WB_CACHE_DIR pointing into the build tree so they never touch the
# user's runs or caches.
# CTest runs each binary through cmake/run_qt_test.sh, which exits WB_ALL_SKIPPED_RC only when the
# binary exited 0 and every one of its test functions skipped, and 1 when any function failed.
set(WB_RUN_QT_TEST ${CMAKE_CURRENT_LIST_DIR}/run_qt_test.sh)

# A test keeps its Q_OBJECT class in its .cpp and ends with #include "<file>.moc". moc runs on
# that file alone, without include paths: AUTOMOC would hand moc every LibTorch include folder,
# which it follows (~5 s a test), and add a mocs_compilation.cpp to compile (~3 s).
function(wb_test_moc target)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_moc)
  set(defs "")
  if(WB_WITH_CUDA)
    set(defs -DWB_WITH_CUDA=1)  # the gpu tests' CUDA-only functions
  endif()
  foreach(src IN LISTS ARGN)
    get_filename_component(src ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    file(STRINGS ${src} has_object REGEX "Q_OBJECT")
    if(NOT has_object)
      continue()
    endif()
    add_custom_command(OUTPUT ${dir}/${stem}.moc
                       COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
                       COMMAND Qt6::moc ${defs} ${src} -o ${dir}/${stem}.moc
                       DEPENDS ${src} Qt6::moc VERBATIM)
    target_sources(${target} PRIVATE ${dir}/${stem}.moc)
    set_source_files_properties(${dir}/${stem}.moc PROPERTIES HEADER_FILE_ONLY ON GENERATED ON)
  endforeach()
  target_include_directories(${target} PRIVATE ${dir})
endfunction()
set(WB_ALL_SKIPPED_RC 77)
function(wb_add_test name)
  cmake_parse_arguments(A "GUI;TORCH;NO_CLI" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  if(A_TORCH)
    wb_torch_pch(${name} QT)
  endif()
  wb_test_moc(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test wb_qt_defs wb_warnings ${A_LIBS})
  if(A_GUI)
    target_link_libraries(${name} PRIVATE Qt6::Widgets)
  endif()
  target_compile_definitions(${name} PRIVATE
    WB_SOURCE_DIR="${PROJECT_SOURCE_DIR}" WB_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(TARGET workbench-cli AND NOT A_NO_CLI)
    target_compile_definitions(${name} PRIVATE WB_CLI_PATH="$<TARGET_FILE:workbench-cli>")
    add_dependencies(${name} workbench-cli)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  # Through run_qt_test.sh: a failure in any function fails the test; Skipped only when every
  # function skipped. The binary gets 10 s less than CTest's limit, so the runner ends it itself.
  math(EXPR binary_timeout "${A_TIMEOUT} - 10")
  add_test(NAME ${name} COMMAND bash ${WB_RUN_QT_TEST} ${binary_timeout} $<TARGET_FILE:${name}>)
  set(env "WB_RUNS_ROOT=${PROJECT_BINARY_DIR}/test-runs;WB_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache;QT_QPA_PLATFORM=offscreen")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${A_TIMEOUT} ENVIRONMENT "${env}")
  if(A_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}")
  endif()
  # A binary whose every function QSKIPped (no CUDA, no dataset) reads as Skipped, never as passed.
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${WB_ALL_SKIPPED_RC})
endfunction()

# wb_glob_tests(LIBS ...): every test_*.cpp in this folder becomes a test linked to LIBS.
# test_*_gpu.cpp get the CTest label `gpu` (they QSKIP with a reason without CUDA);
# test_*_slow.cpp get the label `slow` and a 900 s timeout.
function(wb_glob_tests)
  cmake_parse_arguments(A "GUI;TORCH" "" "LIBS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_*.cpp)
  foreach(src IN LISTS srcs)
    get_filename_component(name ${src} NAME_WE)
    set(labels "")
    set(timeout 300)
    if(name MATCHES "_gpu$")
      set(labels gpu)
    elseif(name MATCHES "_slow$")
      set(labels slow)
      set(timeout 900)
    endif()
    set(gui "")
    if(A_GUI)
      set(gui GUI)
    endif()
    set(torch "")
    if(A_TORCH)
      set(torch TORCH)
    endif()
    wb_add_test(${name} ${gui} ${torch} SOURCES ${src} LIBS ${A_LIBS} LABELS ${labels} TIMEOUT ${timeout})
  endforeach()
endfunction()

# wb_needs_slurm(test ...): these tests run on the `slurm` fixture's cluster (tests/CMakeLists.txt):
# CTest starts it before them (also under -R), they find it through SLURM_CONF, and they hold the
# node one at a time (two at once would queue each other's jobs).
function(wb_needs_slurm)
  foreach(t IN LISTS ARGN)
    set_tests_properties(${t} PROPERTIES FIXTURES_REQUIRED slurm RESOURCE_LOCK slurm_node)
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "WB_SLURM_DIR=${WB_SLURM_DIR};SLURM_CONF=${WB_SLURM_DIR}/slurm.conf")
  endforeach()
endfunction()
