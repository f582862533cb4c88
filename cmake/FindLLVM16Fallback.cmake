# FindLLVM16Fallback: LLVM 16 without its CMake package.
#
# Debian's LLVMConfig.cmake checks that every static LLVM library it exports is
# present. A machine with only the shared library and the headers (the GPU
# machine: libLLVM-16.so.1 from its system, headers from
# tools/offline-sysroot.sh) fails that check, so there we find the two pieces
# directly. Hints: LLVM_ROOT (a prefix with include/ and lib/), or the
# environment variables LLVM_INCLUDE_DIR and LLVM_LIBRARY_DIR.
#
# Defines LLVM16Fallback_FOUND, LLVM16Fallback_VERSION and the imported target
# hlogym::llvm (the same name the CMake-package path defines, so code that
# links LLVM is identical on both paths).

find_path(HLOGYM_LLVM_INCLUDE_DIR llvm/Config/llvm-config.h
  HINTS ${LLVM_ROOT}/include ENV LLVM_INCLUDE_DIR
  PATHS /usr/lib/llvm-16/include /usr/include/llvm-16)
# The unversioned libLLVM.so may belong to another LLVM, so ask for 16 first;
# libLLVM-16.so.1 is the runtime name, all a machine without -dev files has.
find_library(HLOGYM_LLVM_LIBRARY NAMES LLVM-16 libLLVM-16.so.1
  HINTS ${LLVM_ROOT}/lib ENV LLVM_LIBRARY_DIR
  PATHS /usr/lib/llvm-16/lib /usr/lib/x86_64-linux-gnu)

if(HLOGYM_LLVM_INCLUDE_DIR)
  file(STRINGS ${HLOGYM_LLVM_INCLUDE_DIR}/llvm/Config/llvm-config.h _llvm_version_line
       REGEX "^#define LLVM_VERSION_STRING ")
  string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" LLVM16Fallback_VERSION "${_llvm_version_line}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LLVM16Fallback
  REQUIRED_VARS HLOGYM_LLVM_LIBRARY HLOGYM_LLVM_INCLUDE_DIR
  VERSION_VAR LLVM16Fallback_VERSION
  REASON_FAILURE_MESSAGE
    "install llvm-16-dev (scripts/setup.sh does), or set LLVM_ROOT to a prefix with include/ and lib/libLLVM-16.so")

if(LLVM16Fallback_FOUND AND NOT LLVM16Fallback_VERSION MATCHES "^16\\.")
  message(FATAL_ERROR "hlogym needs LLVM 16; the headers in ${HLOGYM_LLVM_INCLUDE_DIR} are "
                      "LLVM ${LLVM16Fallback_VERSION}")
endif()

if(LLVM16Fallback_FOUND AND NOT TARGET hlogym::llvm)
  add_library(hlogym::llvm UNKNOWN IMPORTED)
  set_target_properties(hlogym::llvm PROPERTIES
    IMPORTED_LOCATION ${HLOGYM_LLVM_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${HLOGYM_LLVM_INCLUDE_DIR}
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${HLOGYM_LLVM_INCLUDE_DIR}
    # What LLVMConfig.cmake's LLVM_DEFINITIONS holds on Linux.
    INTERFACE_COMPILE_DEFINITIONS
      "_GNU_SOURCE;__STDC_CONSTANT_MACROS;__STDC_FORMAT_MACROS;__STDC_LIMIT_MACROS")
endif()
mark_as_advanced(HLOGYM_LLVM_INCLUDE_DIR HLOGYM_LLVM_LIBRARY)
