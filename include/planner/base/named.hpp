#pragma once
#include <string_view>

namespace planner {

/// A name and the value it spells: one row of an enum's name table (Recompute, Collective),
/// which its parsers, flags and writers all read.
template <typename E>
struct Named {
  std::string_view name;
  E value;
};

}  // namespace planner
