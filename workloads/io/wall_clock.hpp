#pragma once
// Exact parsing of wall-clock timestamps as the Azure traces write them
// ("2023-11-16 18:17:03.9799600", "2024-05-10 00:00:00.005843+00:00"), without locale or
// timezone functions: the date becomes an integer day number and the time integer nanoseconds,
// so differences between rows are exact (100 ns resolution survives a week-long trace).
#include <cstdint>
#include <string>
#include <string_view>

namespace kvcap {

/// Years parse_wall_clock_ns accepts: the nanoseconds of any two such instants and their
/// difference fit in an int64.
inline constexpr int64_t kMinWallClockYear = 1970;
inline constexpr int64_t kMaxWallClockYear = 2199;

/// Nanoseconds since 1970-01-01T00:00:00 UTC. Accepts "YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}]" followed
/// optionally by "Z" or a UTC offset "+HH:MM"/"-HH:MM" (subtracted to get UTC), years
/// kMinWallClockYear to kMaxWallClockYear. InputError naming `where` otherwise.
int64_t parse_wall_clock_ns(std::string_view text, const std::string& where);

/// Days since 1970-01-01 of a proleptic Gregorian date (civil calendar arithmetic).
int64_t days_from_civil(int64_t year, unsigned month, unsigned day);

/// Inverse for writers: "YYYY-MM-DD HH:MM:SS.fffffff" (7 fraction digits, as Azure writes).
std::string format_wall_clock_ns(int64_t ns_since_epoch);

}  // namespace kvcap
