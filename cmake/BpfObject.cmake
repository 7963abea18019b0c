# bpf_skeleton(<target> <source.bpf.c> [DEPENDS headers...])
#
# Compiles one CO-RE BPF program with clang, strips its DWARF and turns it into a bpftool light skeleton
# header (`gen skeleton -L`): a loader program that the kernel runs to create the maps and load the
# programs, applying the CO-RE relocations against its own BTF, so userspace never parses vmlinux BTF.
# The result is an INTERFACE library that puts "<name>.lskel.h" on the include path, so the object is
# embedded in the binaries that link it: there is no separate .o to install.
find_program(BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(BPF_LLVM_STRIP NAMES llvm-strip llvm-strip-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

function(bpf_skeleton target source)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  get_filename_component(stem ${source} NAME_WE)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/bpf)
  set(obj ${out_dir}/${stem}.bpf.o)
  set(skel ${out_dir}/${stem}.lskel.h)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(arch x86)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(arch arm64)
  else()
    message(FATAL_ERROR "BPF programs: unsupported architecture ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${arch} -Wall -Werror
            -I${CMAKE_CURRENT_SOURCE_DIR} -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}
            -c ${CMAKE_CURRENT_SOURCE_DIR}/${source} -o ${obj}
    COMMAND ${BPF_LLVM_STRIP} -g ${obj}
    COMMAND ${BPFTOOL} gen skeleton -L ${obj} name ${stem} > ${skel}
    DEPENDS ${source} ${ARG_DEPENDS}
    COMMENT "BPF light skeleton ${stem}.lskel.h"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS ${skel})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} INTERFACE ${out_dir})
endfunction()
