# The libFuzzer build (build-fuzz/, configured by scripts/setup with clang and
# -DTETHER_FUZZ=ON): the same layer libraries as the main build, compiled with
# coverage instrumentation, AddressSanitizer and UndefinedBehaviorSanitizer,
# and one fuzz target per parser (fuzz/README section of the top README).
# Included from the top-level CMakeLists.txt instead of src/tests/bench.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TETHER_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()

# -fno-sanitize=function: clang 14 cannot emit its prologue data for
# coroutine functions ("Cannot represent a difference across sections").
# -fno-sanitize-recover: undefined behaviour is a crash libFuzzer records.
set(fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function
               -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -Wno-unknown-warning-option)
add_compile_options(${fuzz_flags})
add_link_options(-fsanitize=address,undefined)
# No precompiled header here (cmake/tether.cmake says why).
set_target_properties(tether_pch PROPERTIES EXCLUDE_FROM_ALL ON)

# Only what a fuzz target links gets built.
add_subdirectory(src EXCLUDE_FROM_ALL)

set(TETHER_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
# Seconds each target fuzzes in `make test` (CTest fuzz.<target>).
set(TETHER_FUZZ_TEST_SECONDS 4 CACHE STRING "seconds each fuzz target runs under CTest")

enable_testing()

# tether_fuzz_target(name source libraries...): fuzz_<name>, and the CTest
# test fuzz.<name>: replays fuzz/regressions/<name>/ and the corpus
# fuzz/corpus/<name>/, then fuzzes for TETHER_FUZZ_TEST_SECONDS. New inputs go
# to the build directory's corpus/<name>/, never into the repository.
function(tether_fuzz_target name source)
  add_executable(fuzz_${name} ${TETHER_FUZZ_DIR}/${source})
  target_include_directories(fuzz_${name} PRIVATE ${TETHER_FUZZ_DIR})
  target_link_libraries(fuzz_${name} PRIVATE ${ARGN})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  tether_use_pch(fuzz_${name})
  set(scratch ${CMAKE_BINARY_DIR}/corpus/${name})
  set(artifacts ${CMAKE_BINARY_DIR}/artifacts/${name}/)
  file(MAKE_DIRECTORY ${scratch} ${artifacts} ${TETHER_FUZZ_DIR}/corpus/${name} ${TETHER_FUZZ_DIR}/regressions/${name})
  add_test(NAME fuzz.${name}
           COMMAND fuzz_${name} -max_total_time=${TETHER_FUZZ_TEST_SECONDS} -timeout=25 -rss_limit_mb=2048
                   -print_final_stats=1 -artifact_prefix=${artifacts}
                   ${scratch} ${TETHER_FUZZ_DIR}/regressions/${name} ${TETHER_FUZZ_DIR}/corpus/${name})
  set_tests_properties(fuzz.${name} PROPERTIES TIMEOUT 300)
endfunction()

tether_fuzz_target(sse_parser sse_parser_fuzz.cpp tether_http_sse)
tether_fuzz_target(events events_fuzz.cpp tether_model)
tether_fuzz_target(provider_streams provider_streams_fuzz.cpp tether_providers)
tether_fuzz_target(mock_requests mock_requests_fuzz.cpp tether_mock)
# The kinds' readers are compiled in (not their runtimes): the configuration
# is fuzzed as the node reads it.
tether_fuzz_target(config config_fuzz.cpp tether_config tether_providers tether_process fmt::fmt)
target_sources(fuzz_config PRIVATE ${PROJECT_SOURCE_DIR}/src/runtime/native/settings.cpp
                                   ${PROJECT_SOURCE_DIR}/src/runtime/agent/settings.cpp)
tether_fuzz_target(suite suite_fuzz.cpp tether_e2e)
tether_fuzz_target(answers answers_fuzz.cpp tether_model)
tether_fuzz_target(api_requests api_requests_fuzz.cpp tether_api SQLite::SQLite3)
