#pragma once
// Shared by the tests and the fuzz harnesses: whether printed output contains "nan" or "inf" as
// a word of its own, which is how fmt prints a non-finite double (the planner must never).
#include <cstddef>
#include <string_view>

namespace test_support {

inline bool has_non_finite_word(std::string_view text) {
  const auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (const std::string_view word : {std::string_view("nan"), std::string_view("inf")}) {
    for (std::size_t at = text.find(word); at != std::string_view::npos;
         at = text.find(word, at + 1)) {
      const std::size_t end = at + word.size();
      if ((at == 0 || !word_char(text[at - 1])) && (end == text.size() || !word_char(text[end]))) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace test_support
