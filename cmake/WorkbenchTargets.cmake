# Shared build settings, applied per target (no global include_directories).

add_library(wb_warnings INTERFACE)
target_compile_options(wb_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers>)

# Qt defines every Qt target carries (qBittorrent's set plus QT_NO_KEYWORDS: LibTorch uses `slots`).
add_library(wb_qt_defs INTERFACE)
target_compile_definitions(wb_qt_defs INTERFACE
  QT_NO_CAST_FROM_ASCII QT_NO_CONTEXTLESS_CONNECT QT_NO_NARROWING_CONVERSIONS_IN_CONNECT QT_NO_KEYWORDS)

# wb_core_library(name SOURCES ... DEPS ...): a core library with its own include/ surface.
# The include/ surface is the only thing dependants see.
function(wb_core_library name)
  cmake_parse_arguments(A "TORCH" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${A_DEPS} PRIVATE wb_warnings ${A_PRIVATE_DEPS})
  if(A_TORCH)
    wb_torch_pch(${name})
    if(WB_WITH_CUDA)
      target_compile_definitions(${name} PUBLIC WB_WITH_CUDA=1)
    endif()
  endif()
endfunction()

# One precompiled torch header shared by every target that opts in. GCC refuses a PCH built
# with other -fPIC/-fPIE settings (-Winvalid-pch) and silently reparses <torch/torch.h>, ~30 s a
# file, so libraries (-fPIC) and executables (-fPIE: the CLI, tests, benchmarks) get a host each.
function(wb_torch_pch target)
  if(NOT WB_TORCH_PCH)
    return()
  endif()
  cmake_parse_arguments(A "QT" "" "" ${ARGN})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE" AND A_QT)
    # Qt 6 adds -fPIC to its users' flags (after -fPIE): Qt test executables need their own host.
    set(host wb_torch_pch_qt_host)
    if(NOT TARGET ${host})
      add_executable(${host} EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/cmake/pch_exe_host.cpp)
      target_link_libraries(${host} PRIVATE Qt6::Core)
    endif()
  elseif(type STREQUAL "EXECUTABLE")
    set(host wb_torch_pch_exe_host)
    if(NOT TARGET ${host})
      add_executable(${host} EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/cmake/pch_exe_host.cpp)
    endif()
  else()
    set(host wb_torch_pch_host)
    if(NOT TARGET ${host})
      add_library(${host} STATIC ${PROJECT_SOURCE_DIR}/cmake/pch_host.cpp)
    endif()
  endif()
  get_target_property(done ${host} WB_PCH_CONFIGURED)
  if(NOT done)
    target_link_libraries(${host} PUBLIC ${TORCH_LIBRARIES})
    target_link_libraries(${host} PRIVATE wb_warnings)
    target_precompile_headers(${host} PRIVATE <torch/torch.h>)
    set_target_properties(${host} PROPERTIES WB_PCH_CONFIGURED ON)
  endif()
  target_precompile_headers(${target} REUSE_FROM ${host})
  # Loading the 570 MB PCH costs ~10 s: files that never include LibTorch (directly or through a
  # torch-facing core header) skip it.
  get_target_property(srcs ${target} SOURCES)
  get_target_property(srcdir ${target} SOURCE_DIR)
  foreach(src IN LISTS srcs)
    if(NOT src MATCHES "\\.cpp$")
      continue()
    endif()
    if(NOT IS_ABSOLUTE "${src}")
      set(src "${srcdir}/${src}")
    endif()
    file(STRINGS "${src}" hits REGEX "#include [<\"](torch/|ATen/|c10/|wb/(data|model|train|parallel)/)")
    if(NOT hits)
      set_source_files_properties("${src}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
