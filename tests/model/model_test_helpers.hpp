#pragma once
// Helpers shared by test_model.cpp and test_model_terms.cpp (split to stay under 500 lines).
#include <catch2/catch.hpp>
#include "answer_key_inputs.hpp"
#include "planner/io/context.hpp"
#include "planner/model/activations.hpp"
#include "planner/model/collectives.hpp"
#include "planner/model/compute.hpp"
#include "planner/model/evaluate.hpp"
#include "planner/model/memory.hpp"
#include "planner/model/step_time.hpp"

namespace model_test_helpers {

using namespace planner;
using answer_key::printed_as;

inline double in_gib(double bytes) { return bytes / gib; }
inline Cluster key_cluster() { return answer_key::cluster(); }
}  // namespace model_test_helpers
