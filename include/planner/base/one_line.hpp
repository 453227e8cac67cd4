#pragma once
#include <cstddef>
#include <string>
#include <string_view>

/// Input text as an error line shows it (docs/errors.md): on one line, with nothing a terminal
/// would act on, and cut. A key, a --set pointer or a file name may hold any bytes: a newline
/// split the error over two lines, an ESC wrote terminal escape codes to standard error, and a
/// 1 MB key was echoed whole (issue 14).

namespace planner {

/// `prefix` and two lowercase hex digits of `byte`: "\\x1b", "\\u00" "9b".
inline void append_hex(std::string& out, std::string_view prefix, unsigned char byte) {
  constexpr std::string_view digits = "0123456789abcdef";
  out += prefix;
  out += digits[byte >> 4];
  out += digits[byte & 0x0F];
}

/// Length of the valid UTF-8 sequence at `text[i]` (2–4), or 0 when there is none.
[[nodiscard]] inline std::size_t utf8_sequence(std::string_view text, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t n = 0;
  char32_t min = 0;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2, min = 0x80;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3, min = 0x800;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  char32_t cp = b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/// True when `text` is valid UTF-8 throughout (JSON output needs it: nlohmann's writer throws
/// on anything else).
[[nodiscard]] inline bool valid_utf8(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
    } else if (const std::size_t n = utf8_sequence(text, i); n > 0) {
      i += n;
    } else {
      return false;
    }
  }
  return true;
}

/// `text` with every control character escaped — C0 (below 0x20, NUL included) as \n, \r, \t
/// or \xNN, DEL as \x7f, C1 (U+0080–U+009F, which some terminals take as escape sequences) as
/// \u0080…\u009f — and every byte that is not valid UTF-8 as \xNN; then cut to at most about
/// `limit` bytes, ending in "..." when cut, never inside an escape or a UTF-8 sequence.
[[nodiscard]] inline std::string one_line(std::string_view text,
                                          std::size_t limit = std::string::npos) {
  std::string out;
  std::size_t cut = 0;  // out's length at the last piece boundary within limit − 3
  const std::size_t room = limit < 3 ? 0 : limit - 3;
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t used = 1;
    if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7F) {
      append_hex(out, "\\x", b);
    } else if (b < 0x80) {
      out += static_cast<char>(b);
    } else if (const std::size_t n = utf8_sequence(text, i); n == 0) {
      append_hex(out, "\\x", b);
    } else if (n == 2 && b == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      append_hex(out, "\\u00", static_cast<unsigned char>(text[i + 1]));
      used = 2;
    } else {
      out.append(text.substr(i, n));
      used = n;
    }
    i += used;
    if (out.size() <= room) cut = out.size();
    // Past the limit with more to come: the text is cut at the last boundary that leaves
    // room for "...". (Stops early: a 1 MB key is never escaped whole.)
    if (out.size() > limit || (out.size() == limit && i < text.size())) {
      out.resize(cut);
      return out + "...";
    }
  }
  return out;
}

/// `text` as one CSV field (RFC 4180) that no reader or terminal splits: control characters
/// escaped as one_line does (a raw CR or LF broke the row), then quoted, its quotes doubled,
/// when it holds a comma or a double quote.
[[nodiscard]] inline std::string one_line_csv_field(std::string_view text) {
  std::string escaped = one_line(text);
  if (escaped.find_first_of(",\"") == std::string::npos) return escaped;
  std::string out = "\"";
  for (const char c : escaped) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

/// The length to which echoed values and keys are cut, as docs/errors.md promises.
inline constexpr std::size_t echo_limit = 40;

/// The length to which a longer echo (a whole pointer, a --vary) is cut.
inline constexpr std::size_t error_line_limit = 200;

}  // namespace planner
