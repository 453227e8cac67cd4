#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "planner/base/error.hpp"
#include "planner/inputs/plan.hpp"
#include "planner/inputs/scenario.hpp"

/// The strict scenario loader: JSON in, a checked Scenario out, or one InputError whose text
/// is `origin: /json/pointer: what was found, what is expected`. Every key is known (unknown
/// keys are errors with a "did you mean"), every number is range-checked, quantities carry
/// units. The format is docs/scenario-format.md; every message is listed in docs/errors.md.

namespace planner {

/// Decodes a parsed document. `origin` names the input in messages (a file name, "<stdin>").
/// A present "plan" is also checked with validate_plan under the pointer "/plan".
[[nodiscard]] Scenario load_scenario(const nlohmann::json& doc, const std::string& origin);

/// Parses and decodes text. Malformed JSON gives
/// `origin: malformed JSON at line L, column C: <parser message>`; a key repeated within one
/// object is an error too (a JSON parser would silently keep the last one).
/// A scenario's "model" object alone (no preset or hf_config expansion), with every check the
/// scenario loader runs on it; errors point under /model. `planner import hf` checks its output.
[[nodiscard]] Model load_model(const nlohmann::json& model, const std::string& origin);

[[nodiscard]] Scenario load_scenario_text(std::string_view text, const std::string& origin);

/// Reads, parses and decodes a file; "-" reads standard input. The origin in messages is the
/// path as given, or "<stdin>".
[[nodiscard]] Scenario load_scenario_file(const std::string& path);

/// Reads and parses a file ("-" = standard input) without decoding it, so that --set
/// overrides can be applied first; same I/O and syntax errors as load_scenario_file.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path);

/// The origin that messages use for `path`: "<stdin>" for "-", else the path itself.
[[nodiscard]] std::string file_origin(const std::string& path);

/// Parses JSON text with the loader's syntax rules (malformed JSON and repeated keys are
/// InputErrors naming `origin`).
[[nodiscard]] nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

/// As load_scenario, but a pinned "plan" that does not fit the rest of the scenario (after
/// --set or a sweep changed the cluster or the model) is dropped instead of failing: the
/// commands that search (`plan`, `sweep`, `check`) only use it for comparison. `warning` gets
/// the reason, or stays empty. Errors anywhere else still throw.
[[nodiscard]] Scenario load_scenario_for_search(const nlohmann::json& doc,
                                                const std::string& origin, std::string& warning);

/// Applies one `--set POINTER=VALUE` to a document before it is loaded. VALUE is JSON when it
/// parses as JSON (16, true, "x", {"tp": 8}), else it is taken as a string (25GB/s). The
/// pointer must be well formed, not the root, and its parent must be an existing object; the
/// key itself may be new. Errors are InputError("--set", pointer, message).
void apply_override(nlohmann::json& doc, std::string_view assignment);

/// Checks a plan against its scenario: dp·tp·pp·cp equals the world size, tp divides the
/// attention and KV heads, pp ≤ layers, cp divides seq_len and has flash attention,
/// sequence parallelism has tp > 1, serving plans use cp = 1, zero = 0, grad_accum = 1.
/// Throws InputError(origin, pointer_prefix + "/<field>", message) on the first failure.
void validate_plan(const Scenario& s, const Plan& p, const std::string& origin,
                   const std::string& pointer_prefix);

}  // namespace planner
