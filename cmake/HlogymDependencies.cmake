# Finds hlogym's dependencies: Debian's -dev packages for C++ libraries, the
# project's virtual environment for pybind11 and numpy.

find_package(absl REQUIRED)
find_package(TBB REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(Threads REQUIRED)

# BLAS for dot and convolution on the CPU: OpenBLAS, Debian's fast
# multithreaded BLAS, through its CBLAS interface.
find_package(BLAS REQUIRED)
find_path(HLOGYM_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread)
add_library(hlogym::blas INTERFACE IMPORTED)
target_link_libraries(hlogym::blas INTERFACE ${BLAS_LIBRARIES})
if(HLOGYM_CBLAS_INCLUDE_DIR)
  target_include_directories(hlogym::blas SYSTEM INTERFACE ${HLOGYM_CBLAS_INCLUDE_DIR})
endif()

# LLVM 16: its CMake package where it works, else the headers and
# libLLVM-16.so found directly (cmake/FindLLVM16Fallback.cmake). Either way code
# links the imported target hlogym::llvm, the shared libLLVM.
# -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON forces the fallback, to test it here.
find_package(LLVM 16 CONFIG QUIET HINTS /usr/lib/llvm-16 /usr/lib/llvm-16/lib/cmake/llvm)
if(LLVM_FOUND AND TARGET LLVM)
  add_library(hlogym::llvm INTERFACE IMPORTED)
  separate_arguments(_llvm_definitions UNIX_COMMAND "${LLVM_DEFINITIONS}")
  target_include_directories(hlogym::llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(hlogym::llvm INTERFACE ${_llvm_definitions})
  target_link_libraries(hlogym::llvm INTERFACE LLVM)
  message(STATUS "hlogym: LLVM ${LLVM_PACKAGE_VERSION} from its CMake package")
else()
  find_package(LLVM16Fallback REQUIRED)
  message(STATUS "hlogym: LLVM ${LLVM16Fallback_VERSION} from ${HLOGYM_LLVM_LIBRARY} (fallback search)")
endif()

# CUDA is optional: the code that needs it is built only where the toolkit is
# found (HLOGYM_HAVE_CUDA); everything else builds and runs without it.
set(HLOGYM_HAVE_CUDA OFF)
if(NOT HLOGYM_ENABLE_CUDA MATCHES "^(ON|OFF|AUTO)$")
  message(FATAL_ERROR "HLOGYM_ENABLE_CUDA must be ON, OFF or AUTO, not `${HLOGYM_ENABLE_CUDA}`")
endif()
if(NOT HLOGYM_ENABLE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(HLOGYM_HAVE_CUDA ON)
    message(STATUS "hlogym: CUDA ${CUDAToolkit_VERSION} found (headers in ${CUDAToolkit_INCLUDE_DIRS})")
  elseif(HLOGYM_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HLOGYM_ENABLE_CUDA=ON but no CUDA toolkit was found")
  endif()
endif()

if(HLOGYM_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(HLOGYM_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
if(HLOGYM_BUILD_PYTHON)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  if(NOT pybind11_DIR)
    execute_process(COMMAND ${Python3_EXECUTABLE} -m pybind11 --cmakedir
                    OUTPUT_VARIABLE pybind11_DIR OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  find_package(pybind11 CONFIG REQUIRED)
endif()
