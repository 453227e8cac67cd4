#include "planner/io/resilience_json.hpp"

#include <array>
#include <optional>
#include <string_view>

#include "json_object.hpp"

namespace planner {
namespace {

using namespace json_input;

// Upper bounds keep every product and exponent finite (docs/scenario-format.md §Resilience).
constexpr NumberRule positive_time{0, true, 1e12, "a positive time such as \"15 min\" (at most 1e12 s)"};
constexpr NumberRule any_time{0, false, 1e12, "a time of 0 or more such as \"2 min\" (at most 1e12 s)"};
// Bounded below, as the loader's links are: at 1e-300 B/s a write took infinitely long.
constexpr NumberRule bandwidth{1, false, 1e18,
                          "a bandwidth such as \"10 GB/s\" (1 B/s to 1e18 B/s)"};
// At least a second, so the job's failure rate over 2^24 GPUs stays finite.
constexpr NumberRule mtbf_time{1, false, 1e12,
                          "a time of at least 1 s such as \"50677 h\" (at most 1e12 s)"};
constexpr NumberRule state_size{0, false, 0x1p60, "a size of 0 or more such as \"16 B\" (at most 2^60 B)"};
constexpr NumberRule jitter_time{0, false, 3600,
                            "a time of 0 or more such as \"3 ms\" (at most 3600 s)"};

Storage read_storage(const json& v, const std::string& origin) {
  const Object f(v, "/resilience/storage", origin,
                 {"write_bandwidth", "read_bandwidth", "node_bandwidth"});
  Storage s;
  s.write_bytes_per_second = f.quantity("write_bandwidth", Dimension::bytes_per_second, bandwidth);
  s.read_bytes_per_second = f.maybe_quantity("read_bandwidth", Dimension::bytes_per_second, bandwidth)
                                .value_or(s.write_bytes_per_second);
  s.node_bytes_per_second =
      f.maybe_quantity("node_bandwidth", Dimension::bytes_per_second, bandwidth).value_or(0);
  return s;
}

CheckpointPolicy read_checkpoint(const json& v, const std::string& origin) {
  const Object f(v, "/resilience/checkpoint", origin,
                 {"interval", "asynchronous", "host_copy_bandwidth", "gradients", "rng_state",
                  "data_loader_state"});
  CheckpointPolicy c;
  c.interval_seconds = f.maybe_long_time("interval", positive_time);
  c.asynchronous = f.maybe_flag("asynchronous").value_or(false);
  c.host_copy_bytes_per_second =
      f.maybe_quantity("host_copy_bandwidth", Dimension::bytes_per_second, bandwidth)
          .value_or(c.host_copy_bytes_per_second);
  c.gradients = f.maybe_flag("gradients").value_or(false);
  c.rng_state_bytes =
      f.maybe_quantity("rng_state", Dimension::bytes, state_size).value_or(c.rng_state_bytes);
  c.data_loader_state_bytes = f.maybe_quantity("data_loader_state", Dimension::bytes, state_size)
                                  .value_or(c.data_loader_state_bytes);
  return c;
}

RestartTimes read_restart(const json& v, const std::string& origin,
                          std::optional<double>& budget) {
  const Object f(v, "/resilience/restart", origin,
                 {"detect", "reschedule", "start", "warmup", "budget"});
  RestartTimes t;
  t.detect_seconds = f.maybe_long_time("detect", any_time).value_or(t.detect_seconds);
  t.reschedule_seconds =
      f.maybe_long_time("reschedule", any_time).value_or(t.reschedule_seconds);
  t.start_seconds = f.maybe_long_time("start", any_time).value_or(t.start_seconds);
  t.warmup_seconds = f.maybe_long_time("warmup", any_time).value_or(t.warmup_seconds);
  budget = f.maybe_long_time("budget", positive_time);
  return t;
}

constexpr std::array distribution_choices{
    Choice<JitterDistribution>{"exponential", JitterDistribution::exponential},
    Choice<JitterDistribution>{"gaussian", JitterDistribution::gaussian}};

}  // namespace

Stragglers read_stragglers(const json& v, const std::string& origin) {
  const Object f(v, "/stragglers", origin, {"jitter", "distribution"});
  Stragglers s;
  (void)f.need("jitter", jitter_time.expect);
  s.jitter_seconds = *f.maybe_long_time("jitter", jitter_time);
  s.distribution = f.maybe_choice("distribution", distribution_choices).value_or(s.distribution);
  return s;
}

Resilience read_resilience(const json& v, const std::string& origin) {
  const Object f(v, "/resilience", origin, {"gpu_mtbf", "storage", "checkpoint", "restart"});
  Resilience r;
  r.gpu_mtbf_seconds =
      f.maybe_long_time("gpu_mtbf", mtbf_time).value_or(r.gpu_mtbf_seconds);
  r.storage = read_storage(
      f.need("storage",
             "an object with write_bandwidth, such as {\"write_bandwidth\": \"10 GB/s\"}"),
      origin);
  if (const json* c = f.find("checkpoint")) r.checkpoint = read_checkpoint(*c, origin);
  if (const json* t = f.find("restart")) r.restart = read_restart(*t, origin, r.budget_seconds);
  return r;
}

}  // namespace planner
