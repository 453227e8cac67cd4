#pragma once
// A JSON Schema (draft 2020-12) validator for the keywords docs/scenario.schema.json uses,
// after the specification's "JSON Schema Validation" vocabulary (json-schema.org, draft
// 2020-12, §6 and Core §10). A keyword outside the subset is an error, so the schema cannot
// use one this validator would silently ignore. No network: $ref resolves to "#/$defs/NAME".
#include <nlohmann/json.hpp>

#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace json_schema_subset {

using nlohmann::json;

class Validator {
 public:
  explicit Validator(json root) : root_(std::move(root)) {}

  /// The reasons `instance` fails the root schema ("/pointer: reason"); empty when it passes.
  [[nodiscard]] std::vector<std::string> errors(const json& instance) const {
    std::vector<std::string> out;
    check(root_, instance, "", out);
    return out;
  }

 private:
  static bool is_type(const json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "number") return v.is_number();
    // Validation §6.1.1: an integer is a number with a zero fractional part (so 8e1 is one).
    if (t == "integer") {
      if (v.is_number_integer()) return true;
      return v.is_number_float() && std::isfinite(v.get<double>()) &&
             std::floor(v.get<double>()) == v.get<double>();
    }
    throw std::runtime_error("unknown type " + t);
  }

  const json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  bool passes(const json& schema, const json& v, const std::string& at) const {
    std::vector<std::string> scratch;
    check(schema, v, at, scratch);
    return scratch.empty();
  }

  void check(const json& schema, const json& v, const std::string& at,
             std::vector<std::string>& out) const {
    static const std::set<std::string> annotations{"$schema", "$id", "title", "description",
                                                   "$defs"};
    auto fail = [&](const std::string& why) { out.push_back((at.empty() ? "/" : at) + ": " + why); };
    for (const auto& [key, value] : schema.items()) {
      if (annotations.count(key)) continue;
      if (key == "$ref") {
        check(resolve(value.get<std::string>()), v, at, out);
      } else if (key == "type") {
        bool ok = false;
        if (value.is_string()) ok = is_type(v, value.get<std::string>());
        for (const json& t : value.is_array() ? value : json::array()) ok = ok || is_type(v, t.get<std::string>());
        if (!ok) fail("expected type " + value.dump() + ", got " + v.dump());
      } else if (key == "enum") {
        bool found = false;
        for (const json& e : value) found = found || e == v;
        if (!found) fail("expected one of " + value.dump() + ", got " + v.dump());
      } else if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
                 key == "exclusiveMaximum") {
        if (!v.is_number()) continue;
        const double x = v.get<double>(), bound = value.get<double>();
        const bool ok = key == "minimum"            ? x >= bound
                        : key == "maximum"          ? x <= bound
                        : key == "exclusiveMinimum" ? x > bound
                                                    : x < bound;
        if (!ok) fail(key + " " + value.dump() + ", got " + v.dump());
      } else if (key == "pattern") {
        if (!v.is_string()) continue;
        // ECMA-262 regular expressions, as the specification asks (Core §6.4); unanchored.
        if (!std::regex_search(v.get<std::string>(), std::regex(value.get<std::string>()))) {
          fail("does not match " + value.get<std::string>() + ": " + v.dump());
        }
      } else if (key == "properties") {
        if (!v.is_object()) continue;
        for (const auto& [name, sub] : value.items()) {
          if (v.contains(name)) check(sub, v.at(name), at + "/" + name, out);
        }
      } else if (key == "additionalProperties") {
        if (!v.is_object() || value != false) continue;
        for (const auto& [name, sub] : v.items()) {
          if (!schema.contains("properties") || !schema.at("properties").contains(name)) {
            fail("unknown key \"" + name + "\"");
          }
        }
      } else if (key == "required") {
        if (!v.is_object()) continue;
        for (const json& name : value) {
          if (!v.contains(name.get<std::string>())) fail("missing " + name.dump());
        }
      } else if (key == "items") {
        if (!v.is_array()) continue;
        for (std::size_t i = 0; i < v.size(); ++i) {
          check(value, v[i], at + "/" + std::to_string(i), out);
        }
      } else if (key == "minItems" || key == "maxItems") {
        if (!v.is_array()) continue;
        const auto n = value.get<std::size_t>();
        if (key == "minItems" ? v.size() < n : v.size() > n) fail(key + " " + value.dump());
      } else if (key == "anyOf" || key == "oneOf") {
        std::size_t passed = 0;
        for (const json& sub : value) passed += passes(sub, v, at) ? 1 : 0;
        if (key == "anyOf" ? passed == 0 : passed != 1) {
          fail(key + ": " + std::to_string(passed) + " alternatives match");
        }
      } else if (key == "not") {
        if (passes(value, v, at)) fail("matches a schema it must not match: " + value.dump());
      } else {
        throw std::runtime_error("keyword outside the validator's subset: " + key);
      }
    }
  }

  json root_;
};

}  // namespace json_schema_subset
