# Build speed (docs/testing.md §Build time): the test command builds the tree twice (gcc
# Release, clang with sanitizers) on 2 cores, so compile time is what contributors wait for.
#
# Unity builds: CMake compiles the sources of each target in batches of 8, one translation
# unit per batch, so the headers every file includes (the model, JSON, fmt, Catch2) are parsed
# and their templates instantiated once per batch instead of once per file. Release on 2
# cores: 5 min 27 s -> 3 min 11 s. The price: names at file scope (anonymous namespaces,
# statics) share a batch, so two files must not define the same one; a clash is a compile
# error that names both (rename one), and -DPLANNER_UNITY=OFF builds file by file.
option(PLANNER_UNITY "Compile each target's sources in batches (unity build)" ON)
if(PLANNER_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
endif()

# Precompiled headers. The third-party headers every translation
# unit parses again — nlohmann/json (25k lines), fmt and the standard library; Catch2 in the
# tests — are parsed once per target instead of once per file. Only headers that do not change
# with our code go here, so editing a planner header never rebuilds a precompiled header.
option(PLANNER_PCH "Precompile the third-party headers (faster builds)" ON)

set(planner_pch_common
  <algorithm> <array> <cmath> <cstdint> <functional> <map> <memory> <optional> <span>
  <string> <string_view> <utility> <variant> <vector>
  <fmt/format.h> <nlohmann/json.hpp>)

# planner_precompile(target [extra headers...]): the common set plus the target's own.
function(planner_precompile target)
  if(PLANNER_PCH)
    target_precompile_headers(${target} PRIVATE ${planner_pch_common} ${ARGN})
  endif()
endfunction()
