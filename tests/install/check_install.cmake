# `cmake --install` into a fresh prefix puts every part where the FHS and the
# unit expect it: binaries, the provider and the shim, the unit, the man
# pages, bash completion and the docs. Run as a CTest test with
# -DBUILD_DIR=... -DPREFIX=... (PREFIX is emptied first).
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()
foreach(f sbin/fabricd bin/fabricctl lib/libvhca-rdmav34.so lib/libvhca-preload.so
    lib/systemd/system/fabricd.service share/bash-completion/completions/fabricctl
    bin/vfabric-compare share/man/man1/vfabric-compare.1 bin/vfabric-sim share/man/man1/vfabric-sim.1
    share/man/man1/fabricctl.1 share/man/man1/fabricctl-capture.1 share/man/man1/fabricctl-counters.1
    share/man/man1/fabricctl-events.1 share/man/man1/fabricctl-qos.1 share/man/man8/fabricd.8
    share/doc/vfabric/README.md share/doc/vfabric/default.yaml share/doc/vfabric/operator-guide.md
    share/doc/vfabric/configuration.md)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()
# Every man page in the tree is installed, not only the ones named above.
file(GLOB pages RELATIVE ${SOURCE_DIR}/docs/man ${SOURCE_DIR}/docs/man/*.[18])
foreach(p ${pages})
  string(REGEX MATCH "[18]$" section ${p})
  if(NOT EXISTS ${PREFIX}/share/man/man${section}/${p})
    message(FATAL_ERROR "man page not installed: ${p}")
  endif()
endforeach()
# No installed program or library carries test code: no GoogleTest (linked
# statically, its symbols; shared, its NEEDED entry) and nothing of the
# tests' own namespace (vf::test). The configure-time check
# (cmake/check_layers.cmake) looks at link lines; this looks at what ships.
file(GLOB elves ${PREFIX}/bin/* ${PREFIX}/sbin/* ${PREFIX}/lib/*.so)
foreach(f ${elves})
  execute_process(COMMAND nm -C ${f} OUTPUT_VARIABLE syms ERROR_QUIET)
  execute_process(COMMAND readelf -d ${f} OUTPUT_VARIABLE dyn ERROR_QUIET)
  if(syms MATCHES "[ :]testing::" OR syms MATCHES "vf::test::" OR dyn MATCHES "lib(gtest|gmock)")
    message(FATAL_ERROR "${f} carries test code (GoogleTest or vf::test): product code must not link tests/")
  endif()
endforeach()
file(REMOVE_RECURSE ${PREFIX})
