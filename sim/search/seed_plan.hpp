#pragma once
// How many workload seeds a capacity is searched with, and the defaults issue #16 asks for
// ("defaults chosen so a typical capacity is within +-3%"). One resolver for `kvcap search`,
// `kvcap sweep --capacity` and `kvcap check` (flags and baseline keys), so the three read
// --seeds / --seeds-until the same way and run the same stop rule (search_over_seeds).
#include <optional>
#include <string>

namespace kvcap {

/// The default target: a 95% interval within +-3% of the mean ...
inline constexpr double kDefaultSeedsUntilPercent = 3;
/// ... reached within at most this many seeds. On the shipped scenarios +-3% takes 8 seeds
/// (basic-roofline) to 10+ (burst); more than 10 rarely pays (the half-width falls as 1/sqrt(K)).
inline constexpr int kDefaultSeedCap = 10;

struct SeedPlan {
  int seeds = 1;                    ///< a fixed count, or with a target the most seeds to run
  /// Target: stop once the 95% half-width is at most this share of the mean (0 = a fixed count).
  double half_width_fraction = 0;
  double until_percent = 0;        ///< the same target as given, in percent (what a file records)
};

/// What was given, as read from flags or a baseline's capacity object (nullopt = not given), and
/// the names to blame in messages: the settings' own by default, as the caller that read them
/// spells them otherwise ("--seeds" on the command line, "baseline.json: /checks/0/capacity/seeds").
struct SeedChoice {
  std::optional<int> seeds;
  std::optional<double> until_percent;  ///< 0 turns the target off
  std::string seeds_name = "seeds", until_name = "seeds_until";
};

/// The rules, shared by every caller:
/// - --seeds-until P (0 < P < 100): seeds are added, from 3, until the interval is within +-P%,
///   at most --seeds of them (kDefaultSeedCap when not given; a cap below 3 is bad input);
/// - --seeds K alone: exactly K seeds (as before --seeds-until existed);
/// - --seeds-until 0: the target off (K seeds, 1 when --seeds is not given);
/// - neither: `adaptive_default` ? +-kDefaultSeedsUntilPercent within kDefaultSeedCap : 1 seed.
/// InputError naming the flag or key for a value out of range (seeds 1 to `max_seeds`).
SeedPlan resolve_seed_plan(const SeedChoice& given, bool adaptive_default, int max_seeds = 100);

}  // namespace kvcap
