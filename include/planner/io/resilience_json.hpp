#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "planner/inputs/resilience.hpp"
#include "planner/inputs/stragglers.hpp"

/// Strict decoding of the scenario's optional "stragglers" and "resilience" objects, in the
/// loader's style: unknown keys are errors with a "did you mean", every quantity carries its
/// unit and is range-checked, and each error is InputError(origin, JSON pointer, message).
/// Keys: docs/scenario-format.md §Stragglers and §Resilience.

namespace planner {

/// Decodes the object at "/stragglers".
[[nodiscard]] Stragglers read_stragglers(const nlohmann::json& v, const std::string& origin);

/// Decodes the object at "/resilience".
[[nodiscard]] Resilience read_resilience(const nlohmann::json& v, const std::string& origin);

}  // namespace planner
