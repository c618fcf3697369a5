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

# One precompiled torch header shared by every target that opts in.
function(wb_torch_pch target)
  if(NOT WB_TORCH_PCH)
    return()
  endif()
  if(NOT TARGET wb_torch_pch_host)
    add_library(wb_torch_pch_host STATIC ${PROJECT_SOURCE_DIR}/cmake/pch_host.cpp)
    target_link_libraries(wb_torch_pch_host PUBLIC ${TORCH_LIBRARIES})
    target_link_libraries(wb_torch_pch_host PRIVATE wb_warnings)
    target_precompile_headers(wb_torch_pch_host PRIVATE <torch/torch.h>)
  endif()
  target_precompile_headers(${target} REUSE_FROM wb_torch_pch_host)
endfunction()
