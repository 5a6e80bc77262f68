#include "sim/search/seed_plan.hpp"

#include <algorithm>

#include "sim/search/seed_confidence.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

SeedPlan resolve_seed_plan(const SeedChoice& given, bool adaptive_default, int max_seeds) {
  if (given.seeds && (*given.seeds < 1 || *given.seeds > max_seeds))
    throw InputError(given.seeds_name, "expected 1 to " + std::to_string(max_seeds) + " seeds, got " +
                                           std::to_string(*given.seeds));
  SeedPlan plan;
  // --seeds K alone is a fixed count; only a command line (or file) naming neither gets the default.
  const double fallback = given.seeds || !adaptive_default ? 0 : kDefaultSeedsUntilPercent;
  const double until = given.until_percent.value_or(fallback);
  if (given.until_percent && !(until == 0 || (until > 0 && until < 100)))
    throw InputError(given.until_name, "expected a half-width in percent of the mean, above 0 and below 100 (0: a "
                                       "fixed seed count), got " + format_plain(until));
  if (until == 0) {
    plan.seeds = given.seeds.value_or(1);
    return plan;
  }
  plan.half_width_fraction = until / 100;
  plan.until_percent = until;
  plan.seeds = given.seeds.value_or(std::min(kDefaultSeedCap, max_seeds));
  const int min_seeds = SeedTarget{}.min_seeds;
  if (plan.seeds < min_seeds)
    throw InputError(given.seeds_name, "with a target half-width (" + given.until_name + " " + format_plain(until) +
                                           "), the cap on seeds must be at least " + std::to_string(min_seeds) +
                                           ", got " + std::to_string(plan.seeds));
  return plan;
}

}  // namespace kvcap
