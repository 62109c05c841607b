# Shared precompiled header: the standard library and the Boost headers most
# translation units need. Reused by every target that opts in, so it is
# compiled once per configuration.
add_library(tether_pch OBJECT cmake/pch.cpp)
target_link_libraries(tether_pch PUBLIC Boost::headers Boost::json)
target_precompile_headers(tether_pch PUBLIC
  <algorithm> <chrono> <cstdint> <functional> <map> <memory> <mutex> <optional>
  <string> <string_view> <unordered_map> <variant> <vector>
  <boost/asio/awaitable.hpp> <boost/asio/co_spawn.hpp> <boost/asio/io_context.hpp>
  <boost/asio/steady_timer.hpp> <boost/asio/strand.hpp> <boost/asio/use_awaitable.hpp>
  <boost/json.hpp>)

# tether_use_pch(target): reuse the shared precompiled header. Not in the
# clang fuzz build (fuzz/fuzz.cmake) nor in the sanitizer builds
# (cmake/sanitize.cmake): clang, and g++ with -fsanitize, write the build
# directory's path into a precompiled header, so every translation unit using
# it would miss ccache in each fresh checkout (g++'s plain header does not
# depend on the path). The header was compiled with Boost.JSON's definitions
# (BOOST_CONTAINER_NO_LIB, ...), and g++ ignores it in a target without them.
function(tether_use_pch target)
  if(NOT TETHER_FUZZ AND NOT TETHER_SANITIZE)
    target_link_libraries(${target} PRIVATE Boost::json)
    target_precompile_headers(${target} REUSE_FROM tether_pch)
  endif()
endfunction()
