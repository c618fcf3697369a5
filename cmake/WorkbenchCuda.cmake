# The CUDA toolkit a CUDA LibTorch needs at configure time, found before find_package(Torch).
#
# A CUDA LibTorch's CMake config (Caffe2Config.cmake -> public/cuda.cmake) runs
# enable_language(CUDA) and find_package(CUDAToolkit REQUIRED): it needs nvcc, which a pip wheel
# does not ship (the GPU machine has it in /usr/local/cuda). And the toolkit must be the CUDA major
# version the LibTorch was built with, or the binary links two CUDA runtimes. So, before
# find_package(Torch):
#   wb_cuda_prepare()  finds the LibTorch's libc10_cuda (none: a CPU LibTorch, nothing to do), reads
#                      the CUDA major version it links (its NEEDED libcudart.so.N), finds nvcc
#                      (CMAKE_CUDA_COMPILER, CUDAToolkit_ROOT, $CUDA_HOME, /usr/local/cuda, PATH),
#                      sets CMAKE_CUDA_COMPILER and CUDAToolkit_ROOT for the LibTorch's config, and
#                      fails naming both versions when they differ, or saying what to install.
# The pieces are functions of their inputs, so tests/cmake checks them on files it makes.

# The CUDA major version `library` links (NEEDED libcudart.so.N), or "" when it links none.
function(wb_cuda_major_linked_by library out)
  set(major "")
  if(EXISTS "${library}")
    file(STRINGS "${library}" needed REGEX "^libcudart\\.so\\.[0-9]+$" LIMIT_COUNT 1)
    if(needed MATCHES "libcudart\\.so\\.([0-9]+)")
      set(major "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${major}" PARENT_SCOPE)
endfunction()

# The version nvcc reports ("12.4"), or "" when it does not run.
function(wb_nvcc_version nvcc out)
  set(version "")
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE text ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND text MATCHES "release ([0-9]+\\.[0-9]+)")
    set(version "${CMAKE_MATCH_1}")
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

# "" when a toolkit of version `toolkit` ("12.4") fits a LibTorch linking CUDA `torch_major`
# ("12"), else the error to print.
function(wb_cuda_mismatch torch_major toolkit out)
  set(why "")
  string(REGEX MATCH "^[0-9]+" toolkit_major "${toolkit}")
  if(NOT toolkit_major STREQUAL torch_major)
    string(CONCAT why "this LibTorch links CUDA ${torch_major} (libcudart.so.${torch_major}) but the CUDA toolkit found is "
            "${toolkit}: the binary would load two CUDA runtimes. Point CMAKE_CUDA_COMPILER (or CUDAToolkit_ROOT) "
            "at a CUDA ${torch_major}.x toolkit's nvcc, or use a LibTorch built for CUDA ${toolkit_major}.")
  endif()
  set(${out} "${why}" PARENT_SCOPE)
endfunction()

# The LibTorch's libc10_cuda as find_package(Torch) will see it: under CMAKE_PREFIX_PATH / Torch_DIR
# (a wheel's torch/share/cmake has torch/lib two levels up), else the system's.
function(wb_find_c10_cuda out)
  set(hints "")
  foreach(p IN LISTS CMAKE_PREFIX_PATH Torch_DIR)
    list(APPEND hints "${p}/lib" "${p}/../../lib" "${p}/../../../lib")
  endforeach()
  find_library(WB_C10_CUDA_LIBRARY c10_cuda HINTS ${hints})
  set(${out} "${WB_C10_CUDA_LIBRARY}" PARENT_SCOPE)
endfunction()

function(wb_find_nvcc out)
  if(CMAKE_CUDA_COMPILER)
    set(${out} "${CMAKE_CUDA_COMPILER}" PARENT_SCOPE)
    return()
  endif()
  # WB_NVCC_HINTS: where to look besides PATH (tests point it elsewhere).
  if(NOT DEFINED WB_NVCC_HINTS)
    set(WB_NVCC_HINTS "${CUDAToolkit_ROOT}/bin" "$ENV{CUDAToolkit_ROOT}/bin" "$ENV{CUDA_HOME}/bin" "$ENV{CUDA_PATH}/bin"
                      /usr/local/cuda/bin)
  endif()
  find_program(WB_NVCC nvcc HINTS ${WB_NVCC_HINTS})
  set(${out} "${WB_NVCC}" PARENT_SCOPE)
endfunction()

function(wb_cuda_prepare)
  wb_find_c10_cuda(c10_cuda)
  if(NOT c10_cuda)
    return()  # a CPU LibTorch
  endif()
  get_filename_component(c10_cuda "${c10_cuda}" REALPATH)
  wb_cuda_major_linked_by("${c10_cuda}" torch_major)
  wb_find_nvcc(nvcc)
  if(NOT nvcc)
    message(FATAL_ERROR "This LibTorch is built with CUDA ${torch_major} (${c10_cuda}), and its CMake config needs "
                        "the CUDA toolkit's nvcc, which was not found (looked in CUDAToolkit_ROOT, $CUDA_HOME, "
                        "/usr/local/cuda and PATH). Install the CUDA ${torch_major}.x toolkit, or pass "
                        "-DCMAKE_CUDA_COMPILER=/path/to/nvcc.")
  endif()
  # Its real place: a toolkit's layout is read from where nvcc lies (on a merged /usr, PATH may give
  # /bin/nvcc, whose toolkit would be looked for in /include).
  get_filename_component(nvcc "${nvcc}" REALPATH)
  wb_nvcc_version("${nvcc}" toolkit)
  if(NOT toolkit)
    message(FATAL_ERROR "${nvcc} --version did not run or printed no release: is it a CUDA toolkit's nvcc?")
  endif()
  if(torch_major)
    wb_cuda_mismatch("${torch_major}" "${toolkit}" why)
    if(why)
      message(FATAL_ERROR "${why}")
    endif()
  endif()
  set(CMAKE_CUDA_COMPILER "${nvcc}" CACHE FILEPATH "nvcc of the CUDA toolkit this LibTorch was built with")
  # A toolkit in one folder (/usr/local/cuda) is named as such; Debian's is spread over /usr and
  # FindCUDAToolkit finds it from nvcc alone.
  get_filename_component(root "${nvcc}" DIRECTORY)
  get_filename_component(root "${root}" DIRECTORY)
  if(NOT CUDAToolkit_ROOT AND EXISTS "${root}/include/cuda_runtime_api.h")
    set(CUDAToolkit_ROOT "${root}" CACHE PATH "The CUDA toolkit this LibTorch was built with")
  endif()
  message(STATUS "CUDA LibTorch (links CUDA ${torch_major}): toolkit ${toolkit}, nvcc ${nvcc}")
endfunction()
