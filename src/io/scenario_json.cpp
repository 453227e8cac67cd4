#include "planner/io/scenario_json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "planner/io/constraints.hpp"
#include "planner/io/presets.hpp"
#include "planner/base/one_line.hpp"
#include "planner/base/spelling.hpp"
#include "planner/io/catalog.hpp"
#include "planner/io/plausibility.hpp"
#include "planner/io/quantity.hpp"
#include "planner/io/read_input.hpp"
#include "planner/io/resilience_json.hpp"
#include "planner/model/legality.hpp"

namespace planner {
namespace {

using json = nlohmann::json;

// ---- Limits ----------------------------------------------------------------------------
// Counts are bounded so that the int64 products the planner forms (world size, dp·tp·pp·cp,
// dp·micro_batch·grad_accum, batch·context_tokens, seq_len², vocab·hidden, hidden·ffn_hidden)
// stay below 2^63. Products of more factors (layers·hidden·ffn_hidden, seq_len²·heads) are
// computed in double downstream. The table is in docs/errors.md §Limits.

constexpr std::int64_t pow2(int n) { return std::int64_t{1} << n; }

struct IntRule {
  std::int64_t lo;
  std::int64_t hi;
};

constexpr IntRule gpu_count{1, pow2(24)};  // nodes, gpus_per_node, plan degrees
constexpr IntRule layer_count{1, pow2(20)};
constexpr IntRule width{1, pow2(24)};      // hidden, heads, kv_heads
constexpr IntRule ffn_width{1, pow2(26)};  // 4·hidden fits
constexpr IntRule vocab_size{1, pow2(30)};
constexpr IntRule token_count{1, pow2(30)};     // seq_len, context_tokens
constexpr IntRule batch_count{1, pow2(16)};     // micro_batch, grad_accum, serving batch
constexpr IntRule sequence_count{1, pow2(32)};  // micro_batch · grad_accum
constexpr IntRule zero_stage{0, 3};
constexpr std::int64_t max_world = pow2(24);
// Sequences per optimizer step, global_batch_tokens / seq_len: at most micro_batch ·
// grad_accum = 2^16 · 2^16 on one replica. The search enumerates the divisors of each
// replica's share (O(sqrt(n)) each); 2^50 sequences made one search take seconds and a
// plan with thresholds minutes (docs/testing.md §Findings).
constexpr double max_sequences_per_step = 0x1p32;

/// A range for a real number or a quantity; `expect` is the whole "expected ..." phrase.
struct NumberRule {
  double lo;
  bool lo_open;  ///< true: value must be > lo; false: >= lo
  double hi;
  std::string_view expect;
};

constexpr NumberRule gpu_memory{1, false, 0x1p60,
                                "a GPU memory size such as \"192 GiB\" (1 B to 2^60 B)"};
constexpr NumberRule reserve_size{0, false, 0x1p60, "a size such as \"10 GiB\" (0 to 2^60 B)"};
constexpr NumberRule hbm_bandwidth{1, false, 1e18,
                                   "a bandwidth such as \"4.8 TB/s\" (1 B/s to 1e18 B/s)"};
constexpr NumberRule link_bandwidth{1, false, 1e18,
                                    "a bandwidth such as \"50 GB/s\" (1 B/s to 1e18 B/s)"};
constexpr NumberRule compute_rate{
    1, false, 1e21, "a compute rate such as \"400 TFLOP/s\" (1 FLOP/s to 1e21 FLOP/s)"};
constexpr NumberRule link_latency{0, false, 60, "a latency such as \"5 us\" (0 to 60 s)"};
constexpr NumberRule step_time{0, true, 1e6, "a positive time such as \"700 ms\" (at most 1e6 s)"};
constexpr NumberRule slo_time{0, true, 3600, "a positive time such as \"25 ms\" (at most 3600 s)"};
constexpr NumberRule batch_tokens{0, true, 0x1p50,
                                  "a positive number of tokens such as 4194304 (at most 2^50)"};
constexpr NumberRule training_bytes{
    4, false, 64, "a number of bytes per parameter from 4 to 64 (16 for mixed-precision Adam)"};
constexpr NumberRule serving_bytes{
    0, true, 64, "a positive number of bytes per weight, at most 64 (2 for bf16)"};
// Bounded below: at 1e-300 of 1 B/s a decode step took infinitely long (docs/testing.md).
constexpr NumberRule efficiency{0.001, false, 1, "a fraction from 0.001 to 1, such as 0.7"};
constexpr NumberRule param_count{0, true, 1e16,
                                 "a positive parameter count such as 8e9 (at most 1e16)"};
constexpr NumberRule tolerance{0, false, 1, "a relative tolerance from 0 to 1, such as 0.01"};
constexpr IntRule concurrency_count{1, pow2(24)};  // serving concurrency over all replicas
constexpr IntRule block_tokens{1, pow2(16)};       // paged KV-cache block
constexpr NumberRule percentile{0, true, 0.9999, "a quantile such as 0.99 (above 0, at most 0.9999)"};
constexpr NumberRule arrival_rate{0, true, 1e9, "a positive rate in requests per second such as 12.5 (at most 1e9)"};
// A prompt's prefill is timed chunk by chunk; more chunks than this is a chunk size typed in
// the wrong unit (engines use 256 to 16384 tokens).
constexpr std::int64_t max_prefill_chunks = 4096;

template <typename E>
struct Choice {
  std::string_view name;
  E value;
};

constexpr std::array recompute_choices{Choice<Recompute>{"none", Recompute::none},
                                       Choice<Recompute>{"selective", Recompute::selective},
                                       Choice<Recompute>{"full", Recompute::full}};
constexpr std::array kv_sharding_choices{Choice<KvSharding>{"replicate", KvSharding::replicate},
                                         Choice<KvSharding>{"batch", KvSharding::batch}};
constexpr std::array kind_choices{Choice<WorkloadKind>{"training", WorkloadKind::training},
                                  Choice<WorkloadKind>{"serving", WorkloadKind::serving}};
/// The axis table (inputs/plan.hpp) as choices.
constexpr std::array<Choice<Axis>, axis_count> axis_choices = [] {
  std::array<Choice<Axis>, axis_count> out{};
  for (std::size_t i = 0; i < axis_count; ++i) out[i] = {axes[i].name, axes[i].axis};
  return out;
}();
/// The dtype table (base/dtype.hpp) as choices.
constexpr std::array<Choice<Dtype>, dtype_count> dtype_choices = [] {
  std::array<Choice<Dtype>, dtype_count> out{};
  for (std::size_t i = 0; i < dtype_count; ++i) out[i] = {dtypes[i].name, dtypes[i].dtype};
  return out;
}();
constexpr std::array tier_choices{Choice<std::string_view>{"intra_node", "intra_node"},
                                  Choice<std::string_view>{"inter_node", "inter_node"}};

/// JSON nesting allowed in any input. Scenarios need four levels; the bound keeps the
/// recursive printing of values (dump) far from the stack limit on hostile input.
constexpr int max_depth = 64;

// ---- Small text helpers ----------------------------------------------------------------

[[noreturn]] void fail(const std::string& origin, const std::string& pointer,
                       const std::string& message) {
  throw InputError(origin, pointer, message);
}

/// RFC 6901: '~' and '/' inside a key are written "~0" and "~1".
std::string escape_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string quote(std::string_view text) { return describe_value(json(std::string(text))); }

/// nlohmann's what() starts with an id, "[json.exception.parse_error.101] "; drop it.
std::string library_message(std::string_view what) {
  if (const auto end = what.find("] "); what.starts_with("[json.exception.") && end != what.npos) {
    what.remove_prefix(end + 2);
  }
  return std::string(what);
}

/// The reason alone: "parse error at byte 2: escape character ..." -> "escape character ...".
std::string library_reason(std::string_view what) {
  std::string message = library_message(what);
  if (message.starts_with("parse error")) {
    if (const auto colon = message.find(": "); colon != std::string::npos)
      message.erase(0, colon + 2);
  }
  return message;
}

std::string join(const std::vector<std::string_view>& items, std::string_view separator) {
  std::string out;
  for (const std::string_view item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

/// "1, 2, 4, 8, 16, 32, ..." : the first few of `values`, for "try ..." hints.
std::string first_few(const std::vector<std::int64_t>& values) {
  constexpr std::size_t shown = 6;
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  }
  if (values.size() > shown) out += ", ...";
  return out;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> low, high;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

/// The divisors of `n` just below and above `x`: "32 or 64".
std::string nearest_divisors(std::int64_t n, std::int64_t x) {
  std::optional<std::int64_t> below, above;
  for (const std::int64_t d : divisors(n)) {
    if (d < x) below = d;
    if (d > x && !above) above = d;
  }
  if (below && above) return fmt::format("{} or {}", *below, *above);
  return std::to_string(below ? *below : above.value_or(1));
}

std::string limit_text(std::int64_t n) {
  for (int k = 10; k < 63; ++k) {
    if (n == pow2(k)) return fmt::format("{} (2^{})", n, k);
  }
  return std::to_string(n);
}

// ---- Value decoders: each checks the JSON kind before converting (STYLE §4.3.8) --------

std::string int_expect(IntRule r, bool with_limit) {
  if (r.lo == 1 && !with_limit) return "a positive integer";
  if (r.lo == 1) return fmt::format("a positive integer no greater than {}", limit_text(r.hi));
  return fmt::format("an integer from {} to {}", r.lo, limit_text(r.hi));
}

/// Integers may be written 8e9: a float that is exactly integral is accepted.
std::int64_t read_int(const json& v, IntRule r, const std::string& origin, const std::string& ptr) {
  const auto bad = [&](bool too_large) {
    fail(origin, ptr,
         fmt::format("expected {}, got {}", int_expect(r, too_large), describe_value(v)));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(r.hi)) bad(true);
    if (u < static_cast<std::uint64_t>(r.lo)) bad(false);
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < r.lo) bad(false);
    if (i > r.hi) bad(true);
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(r.lo)) bad(false);
    if (d > static_cast<double>(r.hi)) bad(true);
    return static_cast<std::int64_t>(d);
  }
  bad(false);
  return 0;
}

bool read_bool(const json& v, const std::string& origin, const std::string& ptr) {
  if (!v.is_boolean()) {
    fail(origin, ptr, fmt::format("expected true or false, got {}", describe_value(v)));
  }
  return v.get<bool>();
}

std::string read_string(const json& v, const std::string& origin, const std::string& ptr) {
  if (!v.is_string())
    fail(origin, ptr, fmt::format("expected a string, got {}", describe_value(v)));
  return v.get<std::string>();
}

void check_range(double x, const NumberRule& r, const json& v, const std::string& origin,
                 const std::string& ptr) {
  const bool low = r.lo_open ? !(x > r.lo) : !(x >= r.lo);
  if (low || !(x <= r.hi)) {
    fail(origin, ptr, fmt::format("expected {}, got {}", r.expect, describe_value(v)));
  }
}

double read_number(const json& v, const NumberRule& r, const std::string& origin,
                   const std::string& ptr) {
  if (!v.is_number())
    fail(origin, ptr, fmt::format("expected {}, got {}", r.expect, describe_value(v)));
  const double x = v.get<double>();
  check_range(x, r, v, origin, ptr);
  return x;
}

double read_quantity(const json& v, Dimension d, const NumberRule& r, const std::string& origin,
                     const std::string& ptr) {
  const double x = parse_quantity(v, d, origin, ptr);
  check_range(x, r, v, origin, ptr);
  return x;
}

template <typename E, std::size_t N>
std::string choice_list(const std::array<Choice<E>, N>& table) {
  std::vector<std::string> quoted;
  for (const auto& c : table) quoted.push_back(fmt::format("\"{}\"", c.name));
  std::vector<std::string_view> views(quoted.begin(), quoted.end());
  return join(views, ", ");
}

template <typename E, std::size_t N>
E read_choice(const json& v, const std::array<Choice<E>, N>& table, const std::string& origin,
              const std::string& ptr) {
  std::vector<std::string_view> names;
  for (const auto& c : table) names.push_back(c.name);
  std::string hint;
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    for (const auto& c : table) {
      if (c.name == s) return c.value;
    }
    if (const auto guess = closest(s, names)) hint = fmt::format(" (did you mean \"{}\"?)", *guess);
  }
  fail(origin, ptr,
       fmt::format("expected one of {}, got {}{}", choice_list(table), describe_value(v), hint));
}

// ---- Object: strict key sets, pointer in hand (STYLE P12) ------------------------------

/// One JSON object being decoded. The constructor rejects unknown keys before any field is
/// read, because a misspelt key ("hiden") would otherwise be reported as the missing one.
class Object {
 public:
  Object(const json& v, std::string pointer, const std::string& origin,
         std::initializer_list<std::string_view> keys)
      : Object(v, std::move(pointer), origin, std::vector<std::string_view>(keys)) {}

  Object(const json& v, std::string pointer, const std::string& origin,
         std::vector<std::string_view> keys)
      : v_(v), pointer_(std::move(pointer)), origin_(origin), keys_(std::move(keys)) {
    if (!v.is_object()) {
      fail(origin_, pointer_,
           fmt::format("expected an object with keys {}, got {}", join(keys_, ", "),
                       describe_value(v)));
    }
    for (const auto& item : v.items()) check_known(item.key(), keys_);
  }

  /// Narrows the key set after a discriminator is read (the workload kind): a key of the
  /// other variant is an error that lists this variant's keys.
  void restrict_to(std::initializer_list<std::string_view> keys, std::string_view variant) const {
    const std::vector<std::string_view> allowed(keys);
    for (const auto& item : v_.items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
      fail(origin_, path(item.key()),
           fmt::format("not a key of {}; expected one of: {}", variant, join(allowed, ", ")));
    }
  }

  [[nodiscard]] std::string path(std::string_view key) const {
    return pointer_ + "/" + escape_token(key);
  }

  /// An error about the value of `key` that no single range expresses.
  [[noreturn]] void fail_at(std::string_view key, const std::string& message) const {
    fail(origin_, path(key), message);
  }

  [[nodiscard]] const json* find(std::string_view key) const {
    const auto it = v_.find(std::string(key));
    return it == v_.end() ? nullptr : &*it;
  }

  /// The value of a required key; a missing key names what was expected.
  [[nodiscard]] const json& need(std::string_view key, std::string_view expect) const {
    const json* v = find(key);
    if (v == nullptr) {
      fail(origin_, path(key), fmt::format("missing required key (expected {})", expect));
    }
    return *v;
  }

  [[nodiscard]] std::optional<std::int64_t> maybe_int(std::string_view key, IntRule r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_int(*v, r, origin_, path(key));
  }
  [[nodiscard]] std::int64_t integer(std::string_view key, IntRule r) const {
    (void)need(key, int_expect(r, false));
    return *maybe_int(key, r);
  }
  [[nodiscard]] std::int64_t integer(std::string_view key, IntRule r, std::int64_t fallback) const {
    return maybe_int(key, r).value_or(fallback);
  }

  [[nodiscard]] std::optional<bool> maybe_flag(std::string_view key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_bool(*v, origin_, path(key));
  }
  [[nodiscard]] bool flag(std::string_view key, bool fallback) const {
    return maybe_flag(key).value_or(fallback);
  }

  [[nodiscard]] std::optional<std::string> maybe_text(std::string_view key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_string(*v, origin_, path(key));
  }

  [[nodiscard]] std::optional<double> maybe_number(std::string_view key,
                                                   const NumberRule& r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_number(*v, r, origin_, path(key));
  }
  [[nodiscard]] double number(std::string_view key, const NumberRule& r) const {
    (void)need(key, r.expect);
    return *maybe_number(key, r);
  }

  [[nodiscard]] std::optional<double> maybe_quantity(std::string_view key, Dimension d,
                                                     const NumberRule& r) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_quantity(*v, d, r, origin_, path(key));
  }
  [[nodiscard]] double quantity(std::string_view key, Dimension d, const NumberRule& r) const {
    (void)need(key, r.expect);
    return *maybe_quantity(key, d, r);
  }

  template <typename E, std::size_t N>
  [[nodiscard]] std::optional<E> maybe_choice(std::string_view key,
                                              const std::array<Choice<E>, N>& table) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    return read_choice(*v, table, origin_, path(key));
  }

 private:
  void check_known(const std::string& key, const std::vector<std::string_view>& allowed) const {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) return;
    if (const auto guess = closest(key, allowed)) {
      fail(origin_, path(key), fmt::format("unknown key (did you mean '{}'?)", *guess));
    }
    fail(origin_, path(key), fmt::format("unknown key; expected one of: {}", join(allowed, ", ")));
  }

  const json& v_;
  std::string pointer_;
  const std::string& origin_;
  std::vector<std::string_view> keys_;
};

// ---- Sections -------------------------------------------------------------------------

void check_model(const Model& m, const std::string& origin) {
  if (m.hidden % m.heads != 0) {
    fail(origin, "/model/heads",
         fmt::format("heads ({}) must divide hidden ({}); try {}", m.heads, m.hidden,
                     nearest_divisors(m.hidden, m.heads)));
  }
  if (m.kv_heads > m.heads) {
    fail(origin, "/model/kv_heads",
         fmt::format("kv_heads ({}) must not exceed heads ({})", m.kv_heads, m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    fail(origin, "/model/kv_heads",
         fmt::format("kv_heads ({}) must divide heads ({}); try {}", m.kv_heads, m.heads,
                     nearest_divisors(m.heads, m.kv_heads)));
  }
  if (m.params > 0 && m.params <= embedding_params(m)) {
    fail(origin, "/model/params",
         fmt::format(
             "params ({:.4g}) must exceed the embedding parameters, vocab·hidden{} = {:.4g}; "
             "give the total parameter count, such as 8e9",
             m.params, m.tied_embeddings ? "" : "·2 (untied)", embedding_params(m)));
  }
}

std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (const DtypeInfo& d : dtypes) names.push_back(d.name);
  return names;
}

Precision read_precision(const json& v, const std::string& origin) {
  const Object o(v, "/model/precision", origin,
                 {"weights", "gradients", "activations", "kv_cache", "compute"});
  Precision p;
  p.weights = o.maybe_choice("weights", dtype_choices).value_or(p.weights);
  p.gradients = o.maybe_choice("gradients", dtype_choices).value_or(p.gradients);
  p.activations = o.maybe_choice("activations", dtype_choices).value_or(p.activations);
  p.kv_cache = o.maybe_choice("kv_cache", dtype_choices).value_or(p.kv_cache);
  p.compute = o.maybe_choice("compute", dtype_choices).value_or(p.compute);
  return p;
}

Model read_model(const json& v, const std::string& origin) {
  const Object o(v, "/model", origin,
                 {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "vocab",
                  "tied_embeddings", "seq_len", "params", "precision"});
  Model m;
  m.layers = o.integer("layers", layer_count);
  m.hidden = o.integer("hidden", width);
  m.heads = o.integer("heads", width);
  m.kv_heads = o.integer("kv_heads", width, m.heads);
  m.ffn_hidden = o.integer("ffn_hidden", ffn_width, 4 * m.hidden);
  m.gated_mlp = o.flag("gated_mlp", false);
  m.vocab = o.integer("vocab", vocab_size);
  m.tied_embeddings = o.flag("tied_embeddings", false);
  m.seq_len = o.integer("seq_len", token_count);
  m.params = o.maybe_number("params", param_count).value_or(0);
  if (const json* precision = o.find("precision")) {
    m.precision = read_precision(*precision, origin);
  }
  check_model(m, origin);
  return m;
}

/// The catalog entry named by /cluster/gpu/catalog, or nullptr when the GPU is described by
/// numbers alone. An unknown name is an error with the nearest catalogued name.
const CatalogGpu* read_catalog_name(const Object& o, const std::string& origin) {
  const auto name = o.maybe_text("catalog");
  if (!name) return nullptr;
  if (const CatalogGpu* entry = find_catalog_gpu(*name)) return entry;
  const auto guess = closest_catalog_gpu(*name);
  fail(origin, o.path("catalog"),
       fmt::format("unknown GPU {}{}; expected one of: {} (data/gpus.json)", quote(*name),
                   guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : "",
                   catalog_gpu_names()));
}

/// A GPU given by numbers (memory, memory_bandwidth, flops), or named from the catalog
/// ("catalog": "H100-SXM") with any of those numbers as overrides. With a catalog GPU and no
/// flops, the effective rate is the bf16 dense peak times "efficiency", else the catalog's
/// default efficiency (docs/scenario-format.md, docs/validation.md).
Gpu read_gpu(const json& v, const std::string& origin, const CatalogGpu*& entry) {
  entry = nullptr;
  const bool names_catalog = v.is_object() && v.contains("catalog");
  if (!names_catalog && v.is_object() && v.contains("efficiency")) {
    fail(origin, "/cluster/gpu/efficiency",
         "efficiency scales a catalog GPU's bf16 peak; name one with \"catalog\" (such as "
         "\"H100-SXM\") or give flops");
  }
  // Without a catalog name the key set (and so every message) is the one of numbers only.
  const Object o = names_catalog
                       ? Object(v, "/cluster/gpu", origin,
                                {"catalog", "memory", "memory_bandwidth", "flops", "flops_by_dtype",
                                 "efficiency", "reserve"})
                       : Object(v, "/cluster/gpu", origin,
                                {"memory", "memory_bandwidth", "flops", "flops_by_dtype", "reserve"});
  entry = read_catalog_name(o, origin);
  Gpu g;
  if (entry != nullptr) {
    g.memory_bytes = o.maybe_quantity("memory", Dimension::bytes, gpu_memory)
                         .value_or(entry->memory_bytes);
    g.memory_bandwidth_bytes_per_second =
        o.maybe_quantity("memory_bandwidth", Dimension::bytes_per_second, hbm_bandwidth)
            .value_or(entry->memory_bandwidth_bytes_per_second);
    const auto flops = o.maybe_quantity("flops", Dimension::flops_per_second, compute_rate);
    const auto share = o.maybe_number("efficiency", efficiency);
    if (flops && share) {
      fail(origin, o.path("efficiency"),
           "give flops (an effective rate) or efficiency (a fraction of the bf16 peak), not "
           "both");
    }
    const double peak = entry->peak("bf16").value_or(0);
    g.flops_per_second = flops ? *flops : peak * share.value_or(entry->default_efficiency);
  } else {
    g.memory_bytes = o.quantity("memory", Dimension::bytes, gpu_memory);
    g.memory_bandwidth_bytes_per_second =
        o.quantity("memory_bandwidth", Dimension::bytes_per_second, hbm_bandwidth);
    g.flops_per_second = o.quantity("flops", Dimension::flops_per_second, compute_rate);
  }
  if (const json* rates = o.find("flops_by_dtype")) {
    const Object r(*rates, o.path("flops_by_dtype"), origin, dtype_names());
    for (const DtypeInfo& d : dtypes) {
      g.flops_by_dtype[static_cast<std::size_t>(d.dtype)] =
          r.maybe_quantity(d.name, Dimension::flops_per_second, compute_rate).value_or(0);
    }
  }
  if (entry != nullptr) {
    // Other formats the catalog knows run at the same fraction of their own dense peak as
    // bf16 does (an assumption: the fraction is fitted on bf16 runs only; docs/validation.md).
    const double share = g.flops_per_second / entry->peak("bf16").value_or(1);
    for (const DtypeInfo& d : dtypes) {
      double& rate = g.flops_by_dtype[static_cast<std::size_t>(d.dtype)];
      if (rate > 0 || d.dtype == Dtype::bf16 || d.dtype == Dtype::fp16) continue;
      rate = entry->peak(d.name).value_or(0) * share;
    }
  }
  g.reserve_bytes = o.maybe_quantity("reserve", Dimension::bytes, reserve_size).value_or(0);
  if (g.reserve_bytes >= g.memory_bytes) {
    fail(origin, "/cluster/gpu/reserve",
         fmt::format("reserve ({}) must be less than memory ({}), or nothing is left for the model",
                     format_quantity(g.reserve_bytes, Dimension::bytes),
                     format_quantity(g.memory_bytes, Dimension::bytes)));
  }
  return g;
}

/// A tier's bandwidth as the catalog gives it (0: none), and why there is none.
struct TierDefault {
  double bandwidth = 0;
  std::string missing;  ///< added to the "missing required key" message
};

Tier read_tier(const json& v, const std::string& pointer, const std::string& origin,
               const TierDefault& fallback = {}) {
  const Object o(v, pointer, origin, {"bandwidth", "latency"});
  Tier t;
  t.peer_memory = pointer == "/cluster/intra_node";
  if (fallback.bandwidth > 0) {
    t.bandwidth_bytes_per_second =
        o.maybe_quantity("bandwidth", Dimension::bytes_per_second, link_bandwidth)
            .value_or(fallback.bandwidth);
  } else {
    if (!fallback.missing.empty() && o.find("bandwidth") == nullptr) {
      fail(origin, o.path("bandwidth"),
           fmt::format("missing required key (expected {}; {})", link_bandwidth.expect,
                       fallback.missing));
    }
    t.bandwidth_bytes_per_second =
        o.quantity("bandwidth", Dimension::bytes_per_second, link_bandwidth);
  }
  t.latency_seconds = o.quantity("latency", Dimension::seconds, link_latency);
  return t;
}

constexpr std::string_view tier_expect = "an object with bandwidth and latency";

/// Network domains between the node and the network (docs/scenario-format.md §cluster), innermost
/// first: each spans a multiple of the previous domain's GPUs, and the world is a multiple of
/// the outermost, so every domain is a block of consecutive ranks (model/placement.hpp).
void read_domains(const json& v, Cluster& c, const std::string& origin) {
  const std::string ptr = "/cluster/domains";
  if (!v.is_array() || v.size() > 2) {
    fail(origin, ptr,
         fmt::format("expected an array of at most 2 objects with name, gpus, bandwidth and "
                     "latency, got {}",
                     describe_value(v)));
  }
  std::int64_t inner = c.gpus_per_node;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = ptr + "/" + std::to_string(i);
    const Object o(v[i], at, origin, {"name", "gpus", "bandwidth", "latency", "peer_memory"});
    Tier t;
    t.name = read_string(o.need("name", "a name such as \"rack\""), origin, o.path("name"));
    for (const Tier& other : c.tiers) {
      if (t.name == other.name || t.name == "inter_node") {
        fail(origin, o.path("name"), fmt::format("the name {} is taken; choose another",
                                                 quote(t.name)));
      }
    }
    t.domain_gpus = o.integer("gpus", gpu_count);
    if (t.domain_gpus <= inner || t.domain_gpus % inner != 0) {
      fail(origin, o.path("gpus"),
           fmt::format("expected a multiple of {} greater than it (the GPUs of the tier "
                       "inside), got {}",
                       inner, t.domain_gpus));
    }
    if (world_size(c) % t.domain_gpus != 0 || t.domain_gpus >= world_size(c)) {
      fail(origin, o.path("gpus"),
           fmt::format("expected a proper divisor of the {} GPUs, got {}", world_size(c),
                       t.domain_gpus));
    }
    t.bandwidth_bytes_per_second =
        o.quantity("bandwidth", Dimension::bytes_per_second, link_bandwidth);
    t.latency_seconds = o.quantity("latency", Dimension::seconds, link_latency);
    t.peer_memory = o.flag("peer_memory", false);
    inner = t.domain_gpus;
    c.tiers.push_back(std::move(t));
  }
}

Cluster read_cluster(const json& v, const std::string& origin) {
  const Object o(v, "/cluster", origin,
                 {"nodes", "gpus_per_node", "gpu", "intra_node", "domains", "inter_node"});
  Cluster c;
  c.nodes = o.integer("nodes", gpu_count);
  c.gpus_per_node = o.integer("gpus_per_node", gpu_count);
  // Each factor is at most 2^24, so this product cannot overflow.
  if (world_size(c) > max_world) {
    fail(origin, "/cluster",
         fmt::format("nodes·gpus_per_node = {}·{} = {} GPUs exceeds the limit of {}", c.nodes,
                     c.gpus_per_node, world_size(c), limit_text(max_world)));
  }
  const CatalogGpu* entry = nullptr;
  c.gpu = read_gpu(o.need("gpu", "an object with memory, memory_bandwidth and flops"), origin,
                   entry);
  TierDefault intra, inter;
  if (entry != nullptr) {
    // The scale-up fabric's figure holds only while a node fits inside its domain.
    if (c.gpus_per_node <= entry->scale_up_domain_gpus) {
      intra.bandwidth = entry->scale_up_bandwidth_bytes_per_second;
    } else {
      intra.missing = fmt::format("the catalog's {} joins {} GPUs ({}) but gpus_per_node is {}",
                                  entry->name, entry->scale_up_domain_gpus,
                                  entry->scale_up_fabric, c.gpus_per_node);
    }
    inter.bandwidth = entry->scale_out_bandwidth_bytes_per_second();
    if (inter.bandwidth <= 0) {
      inter.missing = fmt::format("the catalog has no reference network for {}", entry->name);
    }
  }
  c.tiers.clear();
  c.tiers.push_back(
      read_tier(o.need("intra_node", tier_expect), "/cluster/intra_node", origin, intra));
  c.tiers.front().name = "intra_node";
  if (const json* domains = o.find("domains")) read_domains(*domains, c, origin);
  c.tiers.push_back(
      read_tier(o.need("inter_node", tier_expect), "/cluster/inter_node", origin, inter));
  c.tiers.back().name = "inter_node";
  return c;
}

/// The serving workload's keys (docs/scenario-format.md §Serving).
const std::initializer_list<std::string_view> serving_keys{
    "kind", "batch", "concurrency", "context_tokens", "input_tokens", "output_tokens",
    "prefill_chunk_tokens", "slo_per_token", "slo_ttft", "slo_percentile", "request_rate",
    "memory_bandwidth_efficiency", "bytes_per_param", "kv_sharding", "kv_block_tokens"};

/// A serving workload: `batch` (per engine) or `concurrency` (over all replicas), the
/// context (or input and output lengths), the targets and the optional request rate.
void read_serving(const Object& o, Serving& s) {
  const std::optional<std::int64_t> batch = o.maybe_int("batch", batch_count);
  const std::optional<std::int64_t> concurrency = o.maybe_int("concurrency", concurrency_count);
  if (batch && concurrency) {
    o.fail_at("concurrency", "both \"batch\" (per engine) and \"concurrency\" (over all "
                             "replicas) are given; keep one");
  }
  if (!batch && !concurrency) {
    (void)o.need("batch", "an integer number of sequences per engine, or \"concurrency\"");
  }
  s.batch = batch.value_or(1);
  s.concurrency = concurrency.value_or(0);
  s.input_tokens = o.maybe_int("input_tokens", token_count).value_or(0);
  s.output_tokens = o.maybe_int("output_tokens", token_count).value_or(0);
  const std::optional<std::int64_t> context = o.maybe_int("context_tokens", token_count);
  if (!context && (s.input_tokens == 0 || s.output_tokens == 0)) {
    (void)o.need("context_tokens",
                 "an integer number of tokens, or both \"input_tokens\" and \"output_tokens\"");
  }
  s.context_tokens = context.value_or(s.input_tokens + s.output_tokens);
  if (s.input_tokens > s.context_tokens) {
    o.fail_at("input_tokens", fmt::format("{} prompt tokens do not fit the {} context tokens; "
                                          "raise context_tokens",
                                          s.input_tokens, s.context_tokens));
  }
  s.prefill_chunk_tokens = o.maybe_int("prefill_chunk_tokens", token_count).value_or(0);
  if (s.prefill_chunk_tokens > 0 &&
      (prompt_tokens(s) + s.prefill_chunk_tokens - 1) / s.prefill_chunk_tokens > max_prefill_chunks) {
    o.fail_at("prefill_chunk_tokens",
              fmt::format("{} tokens per chunk split the {}-token prompt into more than {} "
                          "chunks; use at least {}",
                          s.prefill_chunk_tokens, prompt_tokens(s), max_prefill_chunks,
                          (prompt_tokens(s) + max_prefill_chunks - 1) / max_prefill_chunks));
  }
  s.slo_per_token_seconds = o.quantity("slo_per_token", Dimension::seconds, slo_time);
  s.slo_ttft_seconds = o.maybe_quantity("slo_ttft", Dimension::seconds, slo_time).value_or(0);
  s.slo_percentile = o.maybe_number("slo_percentile", percentile).value_or(0.5);
  s.request_rate_per_second = o.maybe_number("request_rate", arrival_rate).value_or(0);
  if (s.request_rate_per_second > 0 && s.output_tokens == 0) {
    o.fail_at("request_rate", "a request rate needs \"output_tokens\" (how long each "
                              "request decodes); add it");
  }
  s.memory_bandwidth_efficiency =
      o.maybe_number("memory_bandwidth_efficiency", efficiency).value_or(1.0);
  s.bytes_per_param = o.maybe_number("bytes_per_param", serving_bytes).value_or(2);
  s.kv_sharding = o.maybe_choice("kv_sharding", kv_sharding_choices).value_or(KvSharding::replicate);
  s.kv_block_tokens = o.maybe_int("kv_block_tokens", block_tokens).value_or(1);
}

Workload read_workload(const json& v, const std::string& origin) {
  const Object o(
      v, "/workload", origin,
      {"kind", "global_batch_tokens", "micro_batch", "step_time_per_micro_batch", "batch",
       "concurrency", "context_tokens", "input_tokens", "output_tokens", "prefill_chunk_tokens",
       "slo_per_token", "slo_ttft", "slo_percentile", "request_rate",
       "memory_bandwidth_efficiency", "bytes_per_param", "kv_sharding", "kv_block_tokens"});
  Workload w;
  (void)o.need("kind", "\"training\" or \"serving\"");
  w.kind = *o.maybe_choice("kind", kind_choices);
  if (w.kind == WorkloadKind::training) {
    o.restrict_to({"kind", "global_batch_tokens", "micro_batch", "step_time_per_micro_batch",
                   "bytes_per_param"},
                  "a training workload");
    Training& t = w.training;
    t.global_batch_tokens = o.number("global_batch_tokens", batch_tokens);
    t.micro_batch = o.integer("micro_batch", batch_count, 1);
    t.step_time_per_micro_batch_seconds =
        o.maybe_quantity("step_time_per_micro_batch", Dimension::seconds, step_time).value_or(0);
    t.bytes_per_param = o.maybe_number("bytes_per_param", training_bytes).value_or(16);
    return w;
  }
  o.restrict_to(serving_keys, "a serving workload");
  read_serving(o, w.serving);
  return w;
}

Placement read_placement(const json& v, const std::string& origin, const std::string& ptr) {
  constexpr std::string_view expect =
      "a permutation of [\"tp\", \"cp\", \"dp\", \"pp\"], innermost axis first";
  if (!v.is_array() || v.size() != 4) {
    fail(origin, ptr, fmt::format("expected {}, got {}", expect, describe_value(v)));
  }
  Placement out{};
  std::array<bool, 4> seen{};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string at = ptr + "/" + std::to_string(i);
    const Axis a = read_choice(v[i], axis_choices, origin, at);
    if (seen[static_cast<std::size_t>(a)]) {
      fail(origin, at, fmt::format("\"{}\" appears twice; expected {}", to_string(a), expect));
    }
    seen[static_cast<std::size_t>(a)] = true;
    out[i] = a;
  }
  return out;
}

Plan read_plan(const json& v, const Workload& w, const std::string& origin) {
  const Object o(v, "/plan", origin,
                 {"dp", "tp", "pp", "cp", "zero", "recompute", "flash_attention",
                  "sequence_parallel", "micro_batch", "grad_accum", "virtual_stages", "placement"});
  Plan p;
  p.dp = o.integer("dp", gpu_count, 1);
  // A serving plan's micro-batch is the engine's batch: the sequences decoded together.
  const std::int64_t default_micro_batch =
      w.kind == WorkloadKind::training ? w.training.micro_batch : engine_batch(w.serving, p.dp);
  p.tp = o.integer("tp", gpu_count, 1);
  p.pp = o.integer("pp", gpu_count, 1);
  p.cp = o.integer("cp", gpu_count, 1);
  p.zero = static_cast<int>(o.integer("zero", zero_stage, 0));
  p.recompute = o.maybe_choice("recompute", recompute_choices).value_or(Recompute::none);
  p.flash_attention = o.flag("flash_attention", false);
  p.sequence_parallel = o.flag("sequence_parallel", false);
  p.micro_batch = o.integer("micro_batch", batch_count, default_micro_batch);
  p.grad_accum = o.integer("grad_accum", batch_count, 1);
  p.virtual_stages = o.integer("virtual_stages", batch_count, 1);
  if (const json* placement = o.find("placement")) {
    p.placement = read_placement(*placement, origin, o.path("placement"));
  }
  return p;
}

ExpectedFigure read_figure(const json& v, const std::string& ptr, const std::string& origin) {
  const Object o(v, ptr, origin, {"pointer", "value", "tolerance"});
  ExpectedFigure f;
  f.pointer = read_string(o.need("pointer", "a JSON pointer such as \"/best/time/per_token\""),
                          origin, o.path("pointer"));
  try {
    (void)json::json_pointer(f.pointer);
  } catch (const json::exception& e) {
    fail(origin, o.path("pointer"),
         fmt::format("expected a JSON pointer such as \"/best/time/per_token\", got {} ({})",
                     quote(f.pointer), library_reason(e.what())));
  }
  const json& value = o.need("value", "a number or a quantity such as \"25 ms\"");
  if (value.is_string()) {
    f.value =
        parse_any_quantity_text(value.get_ref<const std::string&>(), origin, o.path("value")).value;
  } else if (value.is_number() && std::isfinite(value.get<double>())) {
    f.value = value.get<double>();
  } else {
    fail(origin, o.path("value"),
         fmt::format("expected a number or a quantity such as \"25 ms\", got {}",
                     describe_value(value)));
  }
  f.relative_tolerance = o.maybe_number("tolerance", tolerance).value_or(0.01);
  return f;
}

Expect read_expect(const json& v, const std::string& origin) {
  const Object o(
      v, "/expect", origin,
      {"dp", "tp", "pp", "cp", "micro_batch", "grad_accum", "sequences_per_replica", "zero",
       "recompute", "flash_attention", "sequence_parallel", "tp_tier", "figures"});
  Expect e;
  e.dp = o.maybe_int("dp", gpu_count);
  e.tp = o.maybe_int("tp", gpu_count);
  e.pp = o.maybe_int("pp", gpu_count);
  e.cp = o.maybe_int("cp", gpu_count);
  e.micro_batch = o.maybe_int("micro_batch", batch_count);
  e.grad_accum = o.maybe_int("grad_accum", batch_count);
  e.sequences_per_replica = o.maybe_int("sequences_per_replica", sequence_count);
  if (const auto zero = o.maybe_int("zero", zero_stage)) e.zero = static_cast<int>(*zero);
  e.recompute = o.maybe_choice("recompute", recompute_choices);
  e.flash_attention = o.maybe_flag("flash_attention");
  e.sequence_parallel = o.maybe_flag("sequence_parallel");
  if (const auto tier = o.maybe_choice("tp_tier", tier_choices)) e.tp_tier = std::string(*tier);
  if (const json* figures = o.find("figures")) {
    if (!figures->is_array()) {
      fail(origin, o.path("figures"),
           fmt::format(
               "expected an array of {{\"pointer\", \"value\", \"tolerance\"}} objects, got {}",
               describe_value(*figures)));
    }
    for (std::size_t i = 0; i < figures->size(); ++i) {
      e.figures.push_back(
          read_figure((*figures)[i], o.path("figures") + "/" + std::to_string(i), origin));
    }
  }
  return e;
}

// ---- Parsing with the loader's syntax rules ---------------------------------------------

/// A parser callback that rejects repeated keys (nlohmann keeps the last one silently) and
/// deep nesting, tracking the JSON pointer of the current position for the message.
class SyntaxGuard {
 public:
  SyntaxGuard(const std::string& origin, std::string base)
      : origin_(origin), base_(std::move(base)) {}

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (depth >= max_depth) {
          fail(origin_, pointer(), fmt::format("JSON nested deeper than {} levels", max_depth));
        }
        stack_.push_back(Frame{event == E::array_start, {}, 0, {}});
        break;
      case E::key:
        stack_.back().key = parsed.get<std::string>();
        if (!stack_.back().keys.insert(stack_.back().key).second) {
          fail(origin_, pointer(), "duplicate key; each key may appear once in an object");
        }
        break;
      case E::object_end:
      case E::array_end:
        stack_.pop_back();
        next_element();
        break;
      case E::value:
        next_element();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    std::string key;    ///< current key, in an object
    std::size_t index;  ///< current element, in an array
    std::set<std::string> keys;
  };

  void next_element() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
  }

  [[nodiscard]] std::string pointer() const {
    std::string out = base_;
    for (const Frame& f : stack_) {
      out += "/" + (f.array ? std::to_string(f.index) : escape_token(f.key));
    }
    return out;
  }

  const std::string& origin_;
  std::string base_;
  std::vector<Frame> stack_;
};

/// Parses `text`; returns nullopt with `syntax_error` set on malformed JSON. Repeated keys and
/// deep nesting throw InputError at once: they are errors even where text may fall back to
/// a string (--set).
std::optional<json> try_parse(std::string_view text, const std::string& origin,
                              const std::string& base, std::string& syntax_error) {
  SyntaxGuard guard(origin, base);
  try {
    return json::parse(text.begin(), text.end(),
                       [&guard](int depth, json::parse_event_t event, json& parsed) {
                         return guard(depth, event, parsed);
                       });
  } catch (const json::exception& e) {
    // "parse error at line 4, column 3: syntax error ..." -> "malformed JSON at line 4, ..."
    std::string message = library_message(e.what());
    if (message.starts_with("parse error")) message.erase(0, 11);
    if (!message.starts_with(" at")) message.insert(0, ": ");
    syntax_error = "malformed JSON" + message;
    return std::nullopt;
  }
}

// ---- Plan checks --------------------------------------------------------------------------

/// The words for a broken rule of model/legality.hpp, with the fix.
std::string violation_message(const Scenario& s, const Plan& p, const Violation& v) {
  const Model& m = s.model;
  switch (v.kind) {
    case ViolationKind::not_positive:
      return fmt::format("expected a positive integer, got {}", v.value);
    case ViolationKind::zero_stage:
      return fmt::format("expected an integer from 0 to 3, got {}", v.value);
    case ViolationKind::placement:
      return "expected a permutation of [\"tp\", \"cp\", \"dp\", \"pp\"], innermost axis first";
    case ViolationKind::world_size: {
      const std::int64_t world = world_size(s.cluster);
      std::int64_t rest = 1;  // the product of the degrees other than dp
      bool overflow = false;
      for (const AxisInfo& row : axes) {
        if (row.axis != Axis::dp) overflow = overflow || __builtin_mul_overflow(rest, p.*row.degree, &rest);
      }
      std::int64_t product = 0;
      overflow = overflow || __builtin_mul_overflow(rest, p.dp, &product);
      std::string fix = fmt::format("the product must equal {}", world);
      if (!overflow && world % rest == 0) fix = fmt::format("set dp to {}", world / rest);
      return fmt::format(
          "world size is {} GPUs ({} nodes × {}) but dp·tp·pp·cp = {}·{}·{}·{} = {}; {}", world,
          s.cluster.nodes, s.cluster.gpus_per_node, p.dp, p.tp, p.pp, p.cp,
          overflow ? std::string("more than 2^63") : std::to_string(product), fix);
    }
    case ViolationKind::tp_heads:
      return fmt::format("tp ({}) must divide heads ({}); try {}", p.tp, m.heads,
                         first_few(divisors(m.heads)));
    case ViolationKind::tp_kv_heads: {
      std::vector<std::int64_t> fits;
      for (const std::int64_t t : divisors(m.heads)) {
        if (m.kv_heads % t == 0 || t % m.kv_heads == 0) fits.push_back(t);
      }
      return fmt::format("tp ({}) and kv_heads ({}) must divide one another, so that KV heads "
                         "are either split or replicated evenly across tp ranks; try {}",
                         p.tp, m.kv_heads, first_few(fits));
    }
    case ViolationKind::sequence_parallel:
      return "sequence_parallel needs tp > 1 (it splits activations across the tp ranks); set "
             "it to false or raise tp";
    case ViolationKind::pp_layers:
      return fmt::format(
          "pp ({}) exceeds layers ({}); each pipeline stage needs at least one layer", p.pp,
          m.layers);
    case ViolationKind::cp_seq_len:
      return fmt::format("cp ({}) must divide seq_len ({}); try {}", p.cp, m.seq_len,
                         first_few(divisors(m.seq_len)));
    case ViolationKind::cp_flash:
      return fmt::format("cp = {} needs flash_attention: true (ring attention computes "
                         "attention in tiles, as flash attention does)",
                         p.cp);
    case ViolationKind::serving_cp:
      return fmt::format("a serving plan needs cp = 1 (context parallelism is modelled for "
                         "training only), got {}",
                         p.cp);
    case ViolationKind::serving_zero:
      return fmt::format("a serving plan needs zero = 0 (there are no gradients or optimizer "
                         "states to shard), got {}",
                         p.zero);
    case ViolationKind::serving_grad_accum:
      return fmt::format(
          "a serving plan needs grad_accum = 1 (there is no optimizer step), got {}",
          p.grad_accum);
    case ViolationKind::virtual_stages_pp:
      return fmt::format("virtual_stages = {} needs pp > 1 (interleaving splits each pipeline "
                         "stage into chunks); set it to 1 or raise pp",
                         p.virtual_stages);
    case ViolationKind::virtual_stages_layers:
      return fmt::format("pp·virtual_stages ({}·{}) must divide layers ({}); each virtual "
                         "stage holds the same number of layers",
                         p.pp, p.virtual_stages, m.layers);
    case ViolationKind::virtual_stages_accum:
      return fmt::format("virtual_stages = {} needs grad_accum ({}) divisible by pp ({}), as "
                         "Megatron-LM's interleaved schedule requires",
                         p.virtual_stages, p.grad_accum, p.pp);
  }
  return "not a legal plan";
}

// ---- Overrides ----------------------------------------------------------------------------

const std::string set_origin = "--set";

/// The reference tokens of an override's pointer; the root ("") is refused, since replacing
/// the whole scenario is not an override.
std::vector<std::string> override_tokens(const std::string& pointer) {
  if (!pointer.starts_with("/")) {
    fail(set_origin, pointer,
         fmt::format("a JSON pointer starts with '/', such as /cluster/nodes{}",
                     pointer.empty() ? "" : fmt::format(" (did you mean /{}?)", pointer)));
  }
  std::vector<std::string> tokens;
  try {
    for (json::json_pointer p(pointer); !p.empty(); p.pop_back()) {
      tokens.insert(tokens.begin(), p.back());
    }
  } catch (const json::exception& e) {
    fail(set_origin, pointer, "malformed JSON pointer: " + library_reason(e.what()));
  }
  return tokens;
}

/// The object that will hold the last token. Intermediate objects are never created: a
/// misspelt "/cluster/gpux/memory" would otherwise add a key the loader then rejects far
/// from its cause.
json& override_parent(json& doc, const std::vector<std::string>& tokens,
                      const std::string& pointer) {
  json* node = &doc;
  std::string walked;  // the pointer of *node
  for (std::size_t i = 0; i + 1 < tokens.size() && node->is_object(); ++i) {
    const auto it = node->find(tokens[i]);
    if (it == node->end()) {
      std::vector<std::string> keys;
      for (const auto& item : node->items()) keys.push_back(item.key());
      const auto guess = closest(tokens[i], keys);
      // Each token as the error line shows a pointer's: escaped and cut (one_line).
      const std::string missing = one_line(walked, error_line_limit) + "/" +
                                  one_line(escape_token(tokens[i]), echo_limit);
      fail(set_origin, pointer,
           fmt::format("{} does not exist{}; --set adds keys only to existing objects{}", missing,
                       guess ? fmt::format(" (did you mean '{}'?)", *guess) : "",
                       guess ? "" : fmt::format(", so set it whole: {}={{...}}", missing)));
    }
    node = &*it;
    walked += "/" + escape_token(tokens[i]);
  }
  if (!node->is_object()) {
    fail(set_origin, pointer,
         fmt::format("{} is not an object; --set replaces keys of objects only",
                     walked.empty() ? "the document" : one_line(walked, error_line_limit)));
  }
  return *node;
}

/// The compute dtype needs a rate, and a serving job's weight dtype sets its bytes per
/// parameter unless the workload gives them.
void check_precision(Scenario& s, const std::string& origin, bool given, bool bytes_given) {
  if (!given) return;
  if (s.workload.kind == WorkloadKind::serving && !bytes_given) {
    s.workload.serving.bytes_per_param = bytes_of(s.model.precision.weights);
  }
  const Dtype compute = s.model.precision.compute;
  if (!(flops_for(s.cluster.gpu, compute) > 0)) {
    fail(origin, "/model/precision/compute",
         fmt::format("no FLOP rate for {}: add /cluster/gpu/flops_by_dtype/{}, such as "
                     "\"800 TFLOP/s\"",
                     to_string(compute), to_string(compute)));
  }
}

}  // namespace

// ---- Public API ---------------------------------------------------------------------------

Scenario load_scenario(const json& doc, const std::string& origin) {
  const Object top(doc, "", origin,
                   {"name", "description", "model", "cluster", "workload", "plan", "expect",
                    "stragglers", "resilience", "constraints"});
  Scenario s;
  s.origin = origin;
  s.name = top.maybe_text("name").value_or("");
  (void)top.maybe_text("description");
  // A preset or an HF config.json expands into the plain model object first (io/presets).
  const std::string folder =
      origin == "<stdin>" ? "" : std::filesystem::path(origin).parent_path().string();
  s.model = read_model(
      expand_model(top.need("model", "an object with layers, hidden, heads, vocab and seq_len, "
                                     "or a \"preset\" (planner list models) and seq_len"),
                   origin, folder),
      origin);
  if (const json* c = top.find("constraints")) {
    const Object o(*c, "/constraints", origin, {"fix", "framework"});
    if (const auto fix = o.maybe_text("fix")) {
      s.constraints = parse_fix(*fix, origin, "/constraints/fix");
    }
    if (const auto f = o.maybe_text("framework")) {
      s.constraints.framework = parse_framework(*f, origin, "/constraints/framework");
    }
  }
  s.cluster = read_cluster(
      top.need("cluster", "an object with nodes, gpus_per_node, gpu, intra_node and inter_node"),
      origin);
  s.workload = read_workload(
      top.need("workload", "an object with kind \"training\" or \"serving\""), origin);
  check_precision(s, origin, top.find("model")->contains("precision"),
                  top.find("workload")->contains("bytes_per_param"));
  if (s.workload.kind == WorkloadKind::training) {
    const double sequences =
        s.workload.training.global_batch_tokens / static_cast<double>(s.model.seq_len);
    if (sequences > max_sequences_per_step) {
      fail(origin, "/workload/global_batch_tokens",
           fmt::format("global_batch_tokens / seq_len = {:.10g} / {} = {:.10g} sequences per step "
                       "exceeds the limit of {}",
                       s.workload.training.global_batch_tokens, s.model.seq_len, sequences,
                       limit_text(static_cast<std::int64_t>(max_sequences_per_step))));
    }
  }
  if (const json* plan = top.find("plan")) {
    s.plan = read_plan(*plan, s.workload, origin);
    validate_plan(s, *s.plan, origin, "/plan");
  }
  if (const json* expect = top.find("expect")) s.expect = read_expect(*expect, origin);
  if (const json* v = top.find("stragglers")) s.stragglers = read_stragglers(*v, origin);
  if (const json* v = top.find("resilience")) s.resilience = read_resilience(*v, origin);
  check_plausible(s);
  return s;
}

json parse_json_text(std::string_view text, const std::string& origin) {
  std::string error;
  auto doc = try_parse(text, origin, "", error);
  if (!doc) fail(origin, "", error);
  return std::move(*doc);
}

Scenario load_scenario_text(std::string_view text, const std::string& origin) {
  return load_scenario(parse_json_text(text, origin), origin);
}

std::string file_origin(const std::string& path) { return path == "-" ? "<stdin>" : path; }

json read_json_file(const std::string& path) {
  return parse_json_text(read_input(path), file_origin(path));
}

Scenario load_scenario_file(const std::string& path) {
  return load_scenario(read_json_file(path), file_origin(path));
}

void apply_override(json& doc, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    fail(set_origin, "",
         fmt::format("expected POINTER=VALUE, such as /cluster/nodes=16, got {}",
                     quote(assignment)));
  }
  const std::string pointer(assignment.substr(0, eq));
  const std::vector<std::string> tokens = override_tokens(pointer);
  json& parent = override_parent(doc, tokens, pointer);
  std::string error;
  const std::string_view value_text = assignment.substr(eq + 1);
  auto value = try_parse(value_text, set_origin, pointer, error);
  // A string must be valid UTF-8, as a JSON file's strings are (the parser checks those): the
  // JSON writer throws on anything else, and a name printed in the output ended in exit 3.
  if (!value && !valid_utf8(value_text)) {
    fail(set_origin, pointer,
         fmt::format("the value \"{}\" is not valid UTF-8 text", one_line(value_text, echo_limit)));
  }
  // Not JSON: the text itself, so that --set /x/bandwidth=25GB/s needs no shell quoting.
  parent[tokens.back()] = value ? std::move(*value) : json(std::string(value_text));
}

void validate_plan(const Scenario& s, const Plan& p, const std::string& origin,
                   const std::string& pointer_prefix) {
  const std::optional<Violation> v =
      first_violation(s.model, s.cluster, s.workload.kind, p, LegalityScope::plan);
  if (!v) return;
  const std::string pointer =
      v->field.empty() ? pointer_prefix : pointer_prefix + "/" + std::string(v->field);
  fail(origin, pointer, violation_message(s, p, *v));
}

Scenario load_scenario_for_search(const nlohmann::json& doc, const std::string& origin,
                                  std::string& warning) {
  warning.clear();
  try {
    return load_scenario(doc, origin);
  } catch (const InputError& e) {
    const bool in_plan = e.pointer() == "/plan" || e.pointer().rfind("/plan/", 0) == 0;
    if (!in_plan || !doc.is_object() || !doc.contains("plan") || !doc.at("plan").is_object()) {
      throw;
    }
    nlohmann::json without = doc;
    without.erase("plan");
    Scenario s = load_scenario(without, origin);
    // Only the world size changed (a sweep over nodes, say): keep the pinned tp, pp, cp,
    // recompute and micro-batch, which a measured step time belongs to, and refill dp.
    if (e.pointer() == "/plan") {
      const nlohmann::json& plan = doc.at("plan");
      auto degree_of = [&](const char* key) -> std::int64_t {
        if (!plan.contains(key)) return 1;
        const nlohmann::json& v = plan.at(key);
        return v.is_number_integer() ? v.get<std::int64_t>() : 0;
      };
      const std::int64_t model = degree_of("tp") * degree_of("pp") * degree_of("cp");
      const std::int64_t world = world_size(s.cluster);
      if (model > 0 && model <= world && world % model == 0) {
        nlohmann::json refilled = doc;
        refilled["plan"]["dp"] = world / model;
        try {
          Scenario r = load_scenario(refilled, origin);
          warning = fmt::format("{}; the pinned plan's dp is refilled to {}", e.what(),
                                world / model);
          return r;
        } catch (const InputError&) {
        }
      }
    }
    warning = std::string(e.what()) + "; the pinned plan is ignored";
    if (s.workload.kind == WorkloadKind::training &&
        s.workload.training.step_time_per_micro_batch_seconds > 0) {
      warning += " (the measured step time now calibrates one GPU holding the whole model)";
    }
    return s;
  }
}

}  // namespace planner
