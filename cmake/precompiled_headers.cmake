# Precompiled headers (docs/testing.md §Build time). The third-party headers every translation
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
