# Runs COMMAND with ARGS (a ;-list) and checks its exit status and that its output contains
# EXPECTED_OUTPUT.
execute_process(COMMAND ${COMMAND} ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL EXPECTED_EXIT)
    message(FATAL_ERROR "exit status ${status}, expected ${EXPECTED_EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(FIND "${out}${err}" "${EXPECTED_OUTPUT}" found)
if(found EQUAL -1)
    message(FATAL_ERROR "output lacks \"${EXPECTED_OUTPUT}\"\nstdout:\n${out}\nstderr:\n${err}")
endif()
