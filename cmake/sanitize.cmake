# The sanitizer builds (build-asan/ and build-tsan/, configured by
# scripts/setup with -DTETHER_SANITIZE=...): the layer libraries compiled with
# g++'s sanitizers, and only the test suites that need neither an agent CLI
# nor a browser. `make sanitize` builds and runs both; `make test` runs it.
#   address,undefined: the unit and component suites of every layer.
#   thread: the suites whose code runs threads (the store's writer, the
#     session layer, the HTTP server, the agents' tool bridge).
# Included from the top-level CMakeLists.txt instead of src/tests/bench.
if(TETHER_SANITIZE STREQUAL "address,undefined")
  # Not provider_tests and node_tests: they link the whole `tether` (the
  # scripted model as a process; the node's parts) for little code of their
  # own, and the providers run under native_tests against the scripted model
  # in process.
  set(TETHER_TEST_SUITES util_tests model_tests http_tests process_tests store_tests session_tests
                         runtime_tests tool_tests config_tests work_tests mock_tests native_tests api_tests
                         e2e_tests env_tests)
elseif(TETHER_SANITIZE STREQUAL "thread")
  set(TETHER_TEST_SUITES store_tests session_tests http_tests tool_bridge_tests)
else()
  message(FATAL_ERROR "TETHER_SANITIZE is \"address,undefined\" or \"thread\", not \"${TETHER_SANITIZE}\"")
endif()

# -O1 -g1: line tables for the reports, and half the compile time of -O2 -g.
# -fno-sanitize-recover: a finding ends the test that made it, so it fails.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1")
set(sanitize_flags -fsanitize=${TETHER_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_options(${sanitize_flags})
add_link_options(-fsanitize=${TETHER_SANITIZE})
# No precompiled header here (cmake/tether.cmake says why).
set_target_properties(tether_pch PROPERTIES EXCLUDE_FROM_ALL ON)

# Only what a selected suite links gets built.
add_subdirectory(src EXCLUDE_FROM_ALL)
enable_testing()
add_subdirectory(tests)
