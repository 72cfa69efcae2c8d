# The layering check must reject what it exists to reject: run it on the
# fixture tree tests/layers/upward and require a failure naming exactly the
# two bad files (an upward include, a folder that is no subsystem) and not
# the good one. -DCHECK=cmake/check_layers.cmake -DFIXTURE=... -DLAYERS=...
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${FIXTURE} "-DLAYERS=${LAYERS}" -P ${CHECK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layering check accepted ${FIXTURE}, which includes against the order")
endif()
foreach(want "daemon/sm/routing_engine.cpp includes daemon/commands/show_routes.hpp: sm is below commands"
             "daemon/toolbox/misc.cpp: folder 'toolbox' is not a daemon subsystem")
  string(FIND "${err}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected \"${want}\" in the check's error, got:\n${err}")
  endif()
endforeach()
string(FIND "${err}" "show_routes.cpp" good)
if(NOT good EQUAL -1)
  message(FATAL_ERROR "the check rejected a downward include (commands -> sm):\n${err}")
endif()
