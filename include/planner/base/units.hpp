#pragma once
/// Unit constants. Every quantity inside the planner is a double in base SI units
/// (bytes, seconds, bytes/s, FLOP, FLOP/s); names carry the unit (`_bytes`, `_seconds`).
/// Memory prints in IEC units (GiB = 2^30 bytes), rates in SI units (GB/s = 1e9 bytes/s),
/// as the answer key does (docs/scenario-format.md, "Quantities").

namespace planner {

inline constexpr double kib = 1024.0;
inline constexpr double mib = 1024.0 * 1024.0;
inline constexpr double gib = 1024.0 * 1024.0 * 1024.0;
inline constexpr double tib = gib * 1024.0;
inline constexpr double kb = 1e3;
inline constexpr double mb = 1e6;
inline constexpr double gb = 1e9;
inline constexpr double tb = 1e12;


}  // namespace planner
