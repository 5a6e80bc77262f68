#include "sim/check/baseline.hpp"

#include <filesystem>
#include <set>

#include "sim/metrics/metric_path.hpp"
#include "sim/search/seed_plan.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

const char* better_name(Better b) {
  switch (b) {
    case Better::higher: return "higher";
    case Better::lower: return "lower";
    case Better::none: return "none";
  }
  return "none";
}

namespace {

// JSON pointer escaping (RFC 6901) so that metric names with '/' or '~' still point right.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

Expectation parse_expectation(const JsonObjectReader& r, const std::string& metric) {
  r.reject_unknown({"value", "rel_tol", "abs_tol", "better", "min", "max", "why"});
  Expectation e;
  e.metric = metric;
  e.pointer = r.pointer();
  if (r.has("why")) (void)r.get_string("why");
  if (r.has("value")) e.value = r.get_number("value");
  if (r.has("min")) e.min = r.get_number("min");
  if (r.has("max")) e.max = r.get_number("max");
  const bool tol = r.has("rel_tol") || r.has("abs_tol");
  if (e.value) {
    if (!r.has("better"))
      throw InputError(r.where("better"), "required with \"value\": \"higher\", \"lower\" or \"none\" (a change "
                                          "either way beyond the tolerance is a regression)");
    if (!tol)
      throw InputError(r.where(), "a \"value\" needs a tolerance: \"rel_tol\" (fraction of value) and/or "
                                  "\"abs_tol\" (same unit as the figure); write 0 for an exact figure");
  } else {
    if (r.has("better") || tol)
      throw InputError(r.where(), "\"better\", \"rel_tol\" and \"abs_tol\" only apply with a \"value\"");
    if (!e.min && !e.max)
      throw InputError(r.where(), "nothing to check: give a \"value\" (with tolerance and better) and/or \"min\" / \"max\"");
  }
  e.rel_tol = r.get_number_in("rel_tol", 0.0, 1e6, 0.0);
  e.abs_tol = r.get_number_in("abs_tol", 0.0, 1e300, 0.0);
  if (r.has("better")) {
    const std::string b = r.get_string("better");
    if (b == "higher") e.better = Better::higher;
    else if (b == "lower") e.better = Better::lower;
    else if (b == "none") e.better = Better::none;
    else throw InputError(r.where("better"), "expected \"higher\", \"lower\" or \"none\", got " + quote_input(b));
  }
  if (e.min && e.max && *e.min > *e.max) throw InputError(r.where("min"), "min is above max");
  return e;
}

CapacityRequest parse_capacity(const JsonObjectReader& r) {
  r.reject_unknown({"attainment", "precision", "seeds", "seeds_until"});
  CapacityRequest c;
  c.attainment = r.get_number_in("attainment", 1e-6, 1.0);
  c.precision = r.get_number_in("precision", 1e-4, 1.0);
  // "seeds" and "seeds_until" read as kvcap search's --seeds and --seeds-until (one resolver),
  // except that a file giving neither keeps meaning one seed: a recorded value is the figure of
  // the search that recorded it, so an old baseline is never silently judged as a mean.
  SeedChoice given;
  given.seeds_name = r.where("seeds");
  given.until_name = r.where("seeds_until");
  if (r.has("seeds")) given.seeds = static_cast<int>(r.get_int("seeds", 1, 64));
  if (r.has("seeds_until")) given.until_percent = r.get_number_in("seeds_until", 0.0, 100.0);
  const SeedPlan plan = resolve_seed_plan(given, false, 64);
  c.seeds = plan.seeds;
  c.target_half_width_fraction = plan.half_width_fraction;
  return c;
}

BaselineCheck parse_check(const JsonObjectReader& r, const nlohmann::ordered_json& expect_order,
                          const std::string& base_dir, std::set<std::string>& names) {
  r.reject_unknown({"name", "why", "scenario", "set", "capacity", "expect"});
  BaselineCheck c;
  c.pointer = r.pointer();
  c.name = r.get_string("name");
  if (c.name.empty()) throw InputError(r.where("name"), "must not be empty");
  if (!names.insert(c.name).second)
    throw InputError(r.where("name"), "another check is already named " + quote_input(c.name));
  if (r.has("why")) (void)r.get_string("why");
  const std::string scenario = r.get_string("scenario");
  if (scenario.empty()) throw InputError(r.where("scenario"), "must name a scenario file");
  const std::filesystem::path sp(scenario);
  c.scenario_file = sp.is_absolute() ? scenario : (std::filesystem::path(base_dir) / sp).lexically_normal().string();
  if (r.has("set")) {
    const auto& sets = r.raw("set");
    if (!sets.is_array()) throw InputError(r.where("set"), "expected an array of \"path=value\" strings");
    for (size_t i = 0; i < sets.size(); ++i) {
      if (!sets[i].is_string())
        throw InputError(r.where("set") + "/" + std::to_string(i), "expected a \"path=value\" string");
      c.sets.push_back(sets[i].get<std::string>());
    }
  }
  const JsonObjectReader ex = r.object("expect");
  if (ex.json().empty()) throw InputError(r.where("expect"), "names no figure to check");
  bool wants_capacity = false;
  // Figures in file order (the table reads as the file does); `expect_order` is the same object
  // parsed order-preserving.
  for (auto it = expect_order.begin(); it != expect_order.end(); ++it) {
    JsonObjectReader er(ex.raw(it.key()), r.file(), ex.pointer() + "/" + pointer_token(it.key()));
    c.expect.push_back(parse_expectation(er, it.key()));
    wants_capacity = wants_capacity || is_capacity_metric(it.key());
  }
  if (r.has("capacity")) {
    if (!wants_capacity)
      throw InputError(r.where("capacity"), "a capacity search is set up but no capacity_requests_per_s or "
                                            "capacity_load_scale is expected (it would only cost time)");
    c.capacity = parse_capacity(r.object("capacity"));
  } else if (wants_capacity) {
    throw InputError(r.where("capacity"), "required when capacity_requests_per_s or capacity_load_scale is expected: "
                                          "{\"attainment\": 0.99, \"precision\": 0.02}");
  }
  return c;
}

}  // namespace

Baseline load_baseline(const std::string& path) {
  // Read once (a regular file only), parsed twice: plainly here, order-preserving below.
  const std::string text = read_regular_file(path, "", "baseline file");
  const nlohmann::json doc = parse_json_text(text, path);
  JsonObjectReader r(doc, path, "");
  r.reject_unknown({"$schema", "description", "checks"});
  // "$schema": where an editor finds the file's JSON Schema (schemas/baseline.schema.json); not read.
  if (r.has("$schema")) (void)r.get_string("$schema");
  if (r.has("description")) (void)r.get_string("description");
  const auto& checks = r.raw("checks");
  if (!checks.is_array() || checks.empty()) throw InputError(r.where("checks"), "expected a non-empty array of checks");
  const auto parent = std::filesystem::path(path).parent_path().string();
  const std::string base_dir = parent.empty() ? "." : parent;
  Baseline b;
  b.file = path;
  std::set<std::string> names;
  // The same text again, order-preserving, only for the order of each check's figures.
  const auto ordered = nlohmann::ordered_json::parse(text);
  for (size_t i = 0; i < checks.size(); ++i) {
    const JsonObjectReader cr(checks[i], path, "/checks/" + std::to_string(i));
    const auto& order = checks[i].contains("expect") ? ordered["checks"][i]["expect"] : nlohmann::ordered_json::object();
    b.checks.push_back(parse_check(cr, order, base_dir, names));
  }
  return b;
}

}  // namespace kvcap
