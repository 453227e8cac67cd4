#pragma once
#include <string>
#include <vector>

#include "planner/inputs/scenario.hpp"

/// Physical sanity of a loaded scenario (issue 14): inputs that are each within their range
/// but together describe something impossible are refused; the merely suspicious are warned
/// about. The bounds and why: docs/model.md §12; the messages: docs/errors.md.

namespace planner {

/// A given `params` may fall below the count the shape gives (docs/model.md §1) by at most
/// this factor: the count matches real dense models within a few per cent (the scenarios
/// here: 0.98 to 1.19), so a factor of 2 only catches a wrong exponent, a dropped digit or a
/// shape that is not the model's. Above the count is a warning only: the rest may be weights
/// the shape does not describe (mixture-of-experts layers; the toy shapes of hand
/// calculations in tests).
inline constexpr double params_tolerance = 2.0;
/// Beyond this factor (but within params_tolerance) a warning.
inline constexpr double params_warning = 1.5;
/// A measured step time may imply at most this multiple of the GPU's stated peak FLOP/s: no
/// kernel beats the peak, and the planner's FLOP count (6·P·D plus attention, docs/model.md
/// §6) can overstate the work by less than 2× (causal attention done as half the square).
inline constexpr double measured_peak_tolerance = 2.0;

/// Throws InputError for an impossible scenario: `params` below the shape's count by more
/// than params_tolerance; a training batch below one sequence per step; a measured step time
/// implying more than measured_peak_tolerance × the GPU's peak (or anything make_context
/// refuses). Called by the loader after everything else is checked.
void check_plausible(const Scenario& s);

/// Warnings, each one line "origin: /pointer: ...", for what is possible but suspicious:
/// `params` off the shape's count by more than params_warning; a measured step time implying
/// more than the GPU's peak.
[[nodiscard]] std::vector<std::string> plausibility_warnings(const Scenario& s);

}  // namespace planner
