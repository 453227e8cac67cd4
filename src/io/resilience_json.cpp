#include "planner/io/resilience_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "planner/base/error.hpp"
#include "planner/io/quantity.hpp"
#include "planner/base/spelling.hpp"

namespace planner {
namespace {

using json = nlohmann::json;

/// The accepted range of one input; `expect` is the whole "expected ..." phrase.
struct Range {
  double lo;
  bool lo_open;  ///< true: the value must exceed lo
  double hi;
  std::string_view expect;
};

// Upper bounds keep every product and exponent finite (docs/scenario-format.md §Resilience).
constexpr Range positive_time{0, true, 1e12, "a positive time such as \"15 min\" (at most 1e12 s)"};
constexpr Range any_time{0, false, 1e12, "a time of 0 or more such as \"2 min\" (at most 1e12 s)"};
// Bounded below, as the loader's links are: at 1e-300 B/s a write took infinitely long.
constexpr Range bandwidth{1, false, 1e18,
                          "a bandwidth such as \"10 GB/s\" (1 B/s to 1e18 B/s)"};
// At least a second, so the job's failure rate over 2^24 GPUs stays finite.
constexpr Range mtbf_time{1, false, 1e12,
                          "a time of at least 1 s such as \"50677 h\" (at most 1e12 s)"};
constexpr Range state_size{0, false, 0x1p60, "a size of 0 or more such as \"16 B\" (at most 2^60 B)"};
constexpr Range jitter_time{0, false, 3600,
                            "a time of 0 or more such as \"3 ms\" (at most 3600 s)"};

/// Times of failures and restarts are written in minutes, hours or days ("15 min", "50677 h",
/// "54 d"); the shared quantity parser knows s, ms, us and ns. A string ending in one of these
/// three units is its number times the unit; the caller's range check then names the original
/// text. Every other value goes to the shared parser.
double time_quantity(const json& v, const std::string& origin, const std::string& pointer) {
  struct Long {
    std::string_view unit;
    double seconds;
  };
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    for (const Long u : {Long{"min", 60.0}, Long{"h", 3600.0}, Long{"d", 86400.0}}) {
      if (text.size() <= u.unit.size() || !text.ends_with(u.unit)) continue;
      std::string_view number(text.data(), text.size() - u.unit.size());
      while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
      while (!number.empty() && number.front() == ' ') number.remove_prefix(1);
      double x = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
      if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(x)) {
        throw InputError(origin, pointer,
                         fmt::format("cannot read {} as a time; write a number and a unit, such "
                                     "as \"15 min\"",
                                     describe_value(v)));
      }
      return x * u.seconds;
    }
  }
  return parse_quantity(v, Dimension::seconds, origin, pointer);
}

/// One JSON object under decoding, its pointer in hand; unknown keys fail before any field.
class Fields {
 public:
  Fields(const json& v, std::string pointer, const std::string& origin,
         std::initializer_list<std::string_view> keys)
      : v_(v), pointer_(std::move(pointer)), origin_(origin), keys_(keys) {
    if (!v.is_object()) {
      fail(pointer_, fmt::format("expected an object with keys {}, got {}", joined(),
                                 describe_value(v)));
    }
    for (const auto& item : v.items()) {
      if (std::find(keys_.begin(), keys_.end(), item.key()) != keys_.end()) continue;
      const auto guess = closest(item.key(), keys_);
      fail(path(item.key()), guess ? fmt::format("unknown key (did you mean '{}'?)", *guess)
                                   : fmt::format("unknown key; expected one of: {}", joined()));
    }
  }

  /// RFC 6901 escapes: '~' is written "~0" and '/' "~1" inside a key.
  [[nodiscard]] std::string path(std::string_view key) const {
    std::string out = pointer_ + "/";
    for (const char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return out;
  }
  [[nodiscard]] const json* find(std::string_view key) const {
    const auto it = v_.find(std::string(key));
    return it == v_.end() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw InputError(origin_, pointer, message);
  }

  [[nodiscard]] std::optional<double> quantity(std::string_view key, Dimension d,
                                               const Range& r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    const double x = d == Dimension::seconds ? time_quantity(*v, origin_, path(key))
                                             : parse_quantity(*v, d, origin_, path(key));
    const bool low = r.lo_open ? !(x > r.lo) : !(x >= r.lo);
    if (low || !(x <= r.hi)) {
      fail(path(key), fmt::format("expected {}, got {}", r.expect, describe_value(*v)));
    }
    return x;
  }
  [[nodiscard]] double required(std::string_view key, Dimension d, const Range& r) const {
    if (find(key) == nullptr) {
      fail(path(key), fmt::format("missing required key (expected {})", r.expect));
    }
    return *quantity(key, d, r);
  }
  [[nodiscard]] std::optional<bool> flag(std::string_view key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      fail(path(key), fmt::format("expected true or false, got {}", describe_value(*v)));
    }
    return v->get<bool>();
  }

 private:
  [[nodiscard]] std::string joined() const {
    std::string out;
    for (const std::string_view k : keys_) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
  }

  const json& v_;
  std::string pointer_;
  const std::string& origin_;
  std::vector<std::string_view> keys_;
};

Storage read_storage(const json& v, const std::string& origin) {
  const Fields f(v, "/resilience/storage", origin,
                 {"write_bandwidth", "read_bandwidth", "node_bandwidth"});
  Storage s;
  s.write_bytes_per_second = f.required("write_bandwidth", Dimension::bytes_per_second, bandwidth);
  s.read_bytes_per_second = f.quantity("read_bandwidth", Dimension::bytes_per_second, bandwidth)
                                .value_or(s.write_bytes_per_second);
  s.node_bytes_per_second =
      f.quantity("node_bandwidth", Dimension::bytes_per_second, bandwidth).value_or(0);
  return s;
}

CheckpointPolicy read_checkpoint(const json& v, const std::string& origin) {
  const Fields f(v, "/resilience/checkpoint", origin,
                 {"interval", "asynchronous", "host_copy_bandwidth", "gradients", "rng_state",
                  "data_loader_state"});
  CheckpointPolicy c;
  c.interval_seconds = f.quantity("interval", Dimension::seconds, positive_time);
  c.asynchronous = f.flag("asynchronous").value_or(false);
  c.host_copy_bytes_per_second =
      f.quantity("host_copy_bandwidth", Dimension::bytes_per_second, bandwidth)
          .value_or(c.host_copy_bytes_per_second);
  c.gradients = f.flag("gradients").value_or(false);
  c.rng_state_bytes =
      f.quantity("rng_state", Dimension::bytes, state_size).value_or(c.rng_state_bytes);
  c.data_loader_state_bytes = f.quantity("data_loader_state", Dimension::bytes, state_size)
                                  .value_or(c.data_loader_state_bytes);
  return c;
}

RestartTimes read_restart(const json& v, const std::string& origin,
                          std::optional<double>& budget) {
  const Fields f(v, "/resilience/restart", origin,
                 {"detect", "reschedule", "start", "warmup", "budget"});
  RestartTimes t;
  t.detect_seconds = f.quantity("detect", Dimension::seconds, any_time).value_or(t.detect_seconds);
  t.reschedule_seconds =
      f.quantity("reschedule", Dimension::seconds, any_time).value_or(t.reschedule_seconds);
  t.start_seconds = f.quantity("start", Dimension::seconds, any_time).value_or(t.start_seconds);
  t.warmup_seconds = f.quantity("warmup", Dimension::seconds, any_time).value_or(t.warmup_seconds);
  budget = f.quantity("budget", Dimension::seconds, positive_time);
  return t;
}

}  // namespace

Stragglers read_stragglers(const json& v, const std::string& origin) {
  const Fields f(v, "/stragglers", origin, {"jitter", "distribution"});
  Stragglers s;
  s.jitter_seconds = f.required("jitter", Dimension::seconds, jitter_time);
  if (const json* d = f.find("distribution")) {
    const std::vector<std::string_view> names{"exponential", "gaussian"};
    const std::string text = d->is_string() ? d->get<std::string>() : std::string();
    if (text == "exponential" || text == "gaussian") {
      s.distribution =
          text == "gaussian" ? JitterDistribution::gaussian : JitterDistribution::exponential;
    } else {
      const auto guess = d->is_string() ? closest(text, names) : std::nullopt;
      f.fail(f.path("distribution"),
             fmt::format("expected one of \"exponential\", \"gaussian\", got {}{}",
                         describe_value(*d),
                         guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : ""));
    }
  }
  return s;
}

Resilience read_resilience(const json& v, const std::string& origin) {
  const Fields f(v, "/resilience", origin, {"gpu_mtbf", "storage", "checkpoint", "restart"});
  Resilience r;
  r.gpu_mtbf_seconds =
      f.quantity("gpu_mtbf", Dimension::seconds, mtbf_time).value_or(r.gpu_mtbf_seconds);
  const json* storage = f.find("storage");
  if (storage == nullptr) {
    f.fail(f.path("storage"),
           "missing required key (expected an object with write_bandwidth, such as "
           "{\"write_bandwidth\": \"10 GB/s\"})");
  }
  r.storage = read_storage(*storage, origin);
  if (const json* c = f.find("checkpoint")) r.checkpoint = read_checkpoint(*c, origin);
  if (const json* t = f.find("restart")) r.restart = read_restart(*t, origin, r.budget_seconds);
  return r;
}

}  // namespace planner
