# Writes OUT, a header defining TETHER_REVISION as the source tree's git
# revision (`git describe --always --dirty`, "unknown" outside a checkout).
# The file is rewritten only when the revision changed, so a build at the
# same revision recompiles nothing. Run as `cmake -DSRC=… -DOUT=… -P revision.cmake`.
execute_process(
  COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE revision
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown")
endif()
set(content "#define TETHER_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
