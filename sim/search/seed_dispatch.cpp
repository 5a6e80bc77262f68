#include "sim/search/seed_dispatch.hpp"

#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/search/sizing_record.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

ojson load_search_record(const LoadSearchResult& r) {
  ojson probes = ojson::array();
  for (const Probe& p : r.probes) probes.push_back(probe_record(p));
  return ojson{{"capped", r.capped}, {"probes", probes}};
}

LoadSearchResult read_load_search_record(const ojson& j, const std::string& where) {
  if (!j.is_object() || !j.contains("capped") || !j["capped"].is_boolean() || !j.contains("probes") ||
      !j["probes"].is_array())
    throw InputError(where, "expected a load search record, an object with \"capped\" (true or false) and \"probes\"");
  LoadSearchResult r;
  const ojson& probes = j["probes"];
  for (size_t i = 0; i < probes.size(); ++i)
    r.probes.push_back(read_probe_record(probes[i], where + ": probe " + std::to_string(i)));
  settle_capacity(r);
  r.capped = j["capped"].get<bool>();
  return r;
}

namespace {

/// One seed's search as it travels: {"seed_index": k, "search": load_search_record}.
struct SeedSearch {
  size_t index = 0;
  LoadSearchResult search;
};

}  // namespace

DispatchedSeeds search_seeds_dispatched(PointDispatcher& d, const nlohmann::json& scenario, const std::string& file,
                                        const LoadSearchOptions& options, int seeds, int width,
                                        const std::function<void(int, const LoadSearchResult&)>& each,
                                        const SeedTarget& target, const std::string& what) {
  const uint64_t base = parse_scenario(scenario, file).seed;
  auto run_text = [&](size_t index) {
    if (index >= static_cast<size_t>(seeds))
      throw InputError(what, "seed " + std::to_string(index) + " is not a seed of this search");
    const int k = static_cast<int>(index);
    const LoadSearchResult r = search_max_load(seed_scenario(scenario, base, k), file, options);
    return ojson{{"seed_index", index}, {"search", load_search_record(r)}}.dump();
  };
  DispatchedSeeds out;
  if (d.is_worker()) {
    d.dispatch({}, run_text, [](const std::string&) {});
    return out;
  }
  const std::string where = what + ": a seed's search from a worker";
  auto run_round = [&](const std::vector<int>& ks) {
    std::vector<size_t> indexes(ks.begin(), ks.end());
    std::vector<LoadSearchResult> got(ks.size());
    out.run += ks.size();
    dispatch_in_order<SeedSearch>(
        d, indexes, [&](size_t j) { return run_text(indexes[j]); },
        [&](const std::string& text) {
          const ojson j = ojson::parse(text, nullptr, false);
          if (j.is_discarded() || !j.is_object() || !j.contains("seed_index") || !j["seed_index"].is_number_unsigned() ||
              !j.contains("search"))
            throw InputError(where, "expected {\"seed_index\": K, \"search\": {...}}");
          return SeedSearch{j["seed_index"].get<size_t>(), read_load_search_record(j["search"], where)};
        },
        [](const SeedSearch& s) { return s.index; }, [](const SeedSearch&) {},
        [&](size_t j, SeedSearch&& s) { got[j] = std::move(s.search); }, what);
    return got;
  };
  if (seeds <= 1) {
    out.first = std::move(run_round({0}).at(0));
    return out;
  }
  SeedRounds rounds;
  rounds.run = run_round;
  rounds.width = width;
  auto keep = [&](int k, const LoadSearchResult& s) {
    if (k == 0) out.first = s;
    if (each) each(k, s);
  };
  out.confidence = search_over_seeds(scenario, file, seeds, rounds, keep, target);
  return out;
}

}  // namespace kvcap
