#include "sim/search/sizing_run.hpp"

#include <algorithm>
#include <numeric>

#include "sim/scenario/scenario.hpp"
#include "sim/search/sizing_record.hpp"
#include "sim/util/build_info.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

namespace {

constexpr size_t kFactors = std::size(kLoadSensitivityFactors);

/// The task's work, as one process runs it.
SizingTask run_task(const SizingRunOptions& o, const SizingOptions& sizing, double target, size_t index) {
  const size_t n = o.candidates.size();
  SizingTask t;
  t.index = index;
  if (index >= n) {
    t.row = size_candidate(with_cost_model(o.scenario, other_cost_model(o.scenario)), o.file, o.candidates[index - n], sizing);
    t.row.probes.clear();  // as cheapest() keeps it
    return t;
  }
  const SizingCandidate& c = o.candidates[index];
  t.row = size_candidate(o.scenario, o.file, c, sizing);
  if (o.procurement) {
    t.headroom = candidate_headroom(o.scenario, o.file, t.row, sizing, target);
    for (const double f : kLoadSensitivityFactors) {
      SizingRow alt = size_candidate(at_load_factor(o.scenario, target, f), o.file, c, sizing);
      alt.probes.clear();
      t.load_sensitivity.push_back(std::move(alt));
    }
  }
  return t;
}

/// The sorted rows of `tasks` 0..n-1 and, with the analysis, its figures (the cost-model task of
/// the recommended candidate must be there then). `where`: whom to blame when it is not.
void assemble(SizingRunResult& r, const nlohmann::json& scenario, bool procurement, double target,
              const std::string& where) {
  const size_t n = r.candidates;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizing_row_before(r.tasks.at(a).row, r.tasks.at(b).row); });
  r.rows.clear();
  for (const size_t i : order) r.rows.push_back(r.tasks.at(i).row);
  if (!procurement) return;
  ProcurementAnalysis a;
  a.target_load_scale = target;
  for (size_t k = 0; k < n; ++k) {
    CandidateHeadroom h = *r.tasks.at(order[k]).headroom;
    h.row = k;
    a.headroom.push_back(std::move(h));
  }
  for (size_t f = 0; f < kFactors; ++f) {
    std::vector<SizingRow> alt;
    for (size_t i = 0; i < n; ++i) alt.push_back(r.tasks.at(i).load_sensitivity.at(f));
    sort_sizing_rows(alt);
    a.load_sensitivity.push_back(cheapest(load_factor_label(kLoadSensitivityFactors[f]), alt));
  }
  for (const size_t i : order)
    if (r.tasks.at(i).row.found) {
      const auto cost = r.tasks.find(n + i);
      if (cost == r.tasks.end())
        throw InputError(where, "holds no cost-model sizing of candidate " + std::to_string(i) +
                                    ", the recommended one (task " + std::to_string(n + i) + ")");
      const nlohmann::json other = other_cost_model(scenario);
      a.other_cost_model = other.dump();
      a.cost_model_sensitivity = cheapest("cost model: " + cost_model_label(other), {cost->second.row});
      break;
    }
  r.analysis = std::move(a);
}

/// The first found candidate of `own` (candidate indexes, in candidate order) by the rows' order.
std::optional<size_t> recommended(const std::map<size_t, SizingTask>& tasks, const std::vector<size_t>& own) {
  std::optional<size_t> best;
  for (const size_t i : own) {
    const SizingRow& row = tasks.at(i).row;
    if (!row.found) continue;
    if (!best || sizing_row_before(row, tasks.at(*best).row)) best = i;
  }
  return best;
}

SearchInputs inputs_of(const nlohmann::json& doc, const std::string& file, const std::vector<std::string>& sets,
                       const InputNames& names, double* target) {
  const ScenarioSettings s = parse_scenario(doc, file);
  if (target) *target = s.load_scale;
  return SearchInputs{file, s.name, s.slo, sets, names};
}

}  // namespace

ojson sizing_identity(const SizingRunOptions& o) {
  ojson candidates = ojson::array();
  for (const auto& c : o.candidates) candidates.push_back(ojson{{"gpu", c.gpu}, {"tensor_parallel_size", c.tensor_parallel_size}});
  ojson prices = ojson::object();
  for (const auto& [gpu, usd] : o.sizing.price_per_gpu_hour_usd) prices[gpu] = usd;
  return ojson{{"kvcap_version", KVCAP_VERSION},
               {"kvcap_build", kvcap_build_id()},
               {"scenario", o.file},
               {"document", ojson::parse(o.scenario.dump())},
               {"set", o.sets},
               {"candidates", candidates},
               {"attainment", o.sizing.goal.min_attainment},
               {"seeds", o.sizing.seeds},
               {"max_replicas", o.sizing.max_replicas},
               {"prices", prices},
               {"procurement", o.procurement}};
}

ojson sizing_task_record(const SizingTask& t) {
  ojson r{{"index", t.index}, {"row", sizing_row_record(t.row)}};
  if (t.headroom) {
    r["headroom"] = headroom_record(*t.headroom);
    ojson alts = ojson::array();
    for (const auto& a : t.load_sensitivity) alts.push_back(sizing_row_record(a));
    r["load_sensitivity"] = alts;
  }
  return r;
}

SizingTask read_sizing_task_record(const ojson& j, const std::string& where, size_t candidates, bool procurement) {
  if (!j.is_object()) throw InputError(where, "expected a sizing task record, a JSON object");
  SizingTask t;
  const auto index = j.find("index");
  if (index == j.end() || !index->is_number_unsigned() || index->get<uint64_t>() >= 2 * candidates ||
      (!procurement && index->get<uint64_t>() >= candidates))
    throw InputError(where, "expected \"index\", a task of this sizing: 0 to " +
                                std::to_string((procurement ? 2 : 1) * candidates - 1));
  t.index = index->get<size_t>();
  const auto row = j.find("row");
  if (row == j.end()) throw InputError(where, "expected \"row\", the task's sizing row");
  const bool candidate_task = t.index < candidates;
  t.row = read_sizing_row_record(*row, where + ": \"row\"", candidate_task);
  const bool analysed = candidate_task && procurement;
  if (analysed != j.contains("headroom") || analysed != j.contains("load_sensitivity"))
    throw InputError(where, analysed ? "expected \"headroom\" and \"load_sensitivity\" (the procurement analysis)"
                                     : "holds \"headroom\" or \"load_sensitivity\", which this task has not");
  if (analysed) {
    t.headroom = read_headroom_record(j["headroom"], where + ": \"headroom\"");
    const ojson& alts = j["load_sensitivity"];
    if (!alts.is_array() || alts.size() != kFactors)
      throw InputError(where, "\"load_sensitivity\" must be an array of " + std::to_string(kFactors) + " rows");
    for (size_t f = 0; f < kFactors; ++f)
      t.load_sensitivity.push_back(
          read_sizing_row_record(alts[f], where + ": \"load_sensitivity\" " + std::to_string(f), false));
  }
  return t;
}

SizingRunResult run_sizing(const SizingRunOptions& o) {
  check_sizing_options(o.sizing);
  if (o.candidates.empty()) throw FieldError("gpu", "expected at least one GPU x TP candidate");
  require_slo(o.scenario, o.file);
  SizingRunResult r;
  double target = 1;
  r.inputs = inputs_of(o.scenario, o.file, o.sets, o.names, &target);
  r.options = o.sizing;
  r.options.exec = {};
  r.identity = sizing_identity(o);
  r.candidates = o.candidates.size();
  r.shard = o.shard;
  const size_t n = o.candidates.size();
  auto owns = [&](size_t task) { return !o.shard || o.shard->holds(task % n); };

  const bool worker = o.dispatcher && o.dispatcher->is_worker();
  // A worker runs one task at a time: each gets the whole pool.
  SizingOptions whole = o.sizing;
  const std::string dispatched = "kvcap search " + o.names("mpi");  // names the dispatch in messages
  auto run_text = [&](size_t index) {
    if (index >= 2 * n) throw InputError(dispatched, "task " + std::to_string(index) + " is not a task of this sizing");
    return sizing_task_record(run_task(o, whole, target, index)).dump();
  };
  if (worker) {
    o.dispatcher->dispatch({}, run_text, [](const std::string&) {});
    return r;
  }

  if (o.journal) {
    for (auto& e : o.journal->start(r.identity, o.shard ? shard_spec_json(*o.shard) : ojson(nullptr))) {
      SizingTask t = read_sizing_task_record(e.record, e.where, n, o.procurement);
      if (!owns(t.index))
        throw InputError(e.where, "task " + std::to_string(t.index) + " is not one of this shard's");
      if (r.tasks.emplace(t.index, std::move(t)).second) ++r.resumed;  // recorded twice: the first is kept
    }
  }

  // Runs `indexes` (tasks not done yet) here or in the workers, journaling each as it finishes.
  auto run_round = [&](const std::vector<size_t>& indexes) {
    if (indexes.empty()) return;
    r.run += indexes.size();
    if (o.dispatcher) {
      const std::string where = dispatched + ": a task record from a worker";
      dispatch_in_order<SizingTask>(
          *o.dispatcher, indexes, [&](size_t j) { return run_text(indexes[j]); },
          [&](const std::string& text) {
            (void)parse_json_line(text, where);
            return read_sizing_task_record(ojson::parse(text), where, n, o.procurement);
          },
          [](const SizingTask& t) { return t.index; },
          [&](const SizingTask& t) {
            if (o.journal) o.journal->record(sizing_task_record(t));
          },
          [&](size_t, SizingTask&& t) { r.tasks.emplace(t.index, std::move(t)); }, dispatched);
      return;
    }
    SizingOptions each = o.sizing;
    each.exec = o.sizing.exec.share(indexes.size());
    run_in_order<SizingTask>(
        o.sizing.exec, indexes.size(),
        [&](size_t j) {
          SizingTask t = run_task(o, each, target, indexes[j]);
          if (o.journal) o.journal->record(sizing_task_record(t));
          return t;
        },
        [&](size_t, SizingTask&& t) { r.tasks.emplace(t.index, std::move(t)); });
  };

  std::vector<size_t> own, todo;
  for (size_t i = 0; i < n; ++i)
    if (owns(i)) {
      own.push_back(i);
      if (!r.tasks.count(i)) todo.push_back(i);
    }
  run_round(todo);
  if (o.procurement)
    if (const auto best = recommended(r.tasks, own); best && !r.tasks.count(n + *best)) run_round({n + *best});
  if (!o.shard) assemble(r, o.scenario, o.procurement, target, "kvcap search");
  return r;
}

void write_sizing_shard(OutputFolder& out, const SizingRunResult& r) {
  KVCAP_CHECK(r.shard.has_value(), "only a sharded sizing writes a shard file");
  out.write(kShardFile, [&r](std::ostream& os) {
    ojson indexes = ojson::array();
    for (const auto& [index, t] : r.tasks) indexes.push_back(index);
    const ojson header{{"kvcap_search_shard", 1},
                       {"identity", r.identity},
                       {"shard", shard_spec_json(*r.shard)},
                       {"candidates", r.candidates},
                       {"tasks", indexes}};
    os << header.dump() << "\n";
    for (const auto& [index, t] : r.tasks) os << sizing_task_record(t).dump() << "\n";
  });
}

SizingRunResult merge_sizing_shards(const std::vector<std::string>& inputs, const InputNames& names) {
  if (inputs.empty()) throw InputError("kvcap merge", "expected the shard folders to merge");
  std::vector<ShardFile> files;
  for (const auto& in : inputs) files.push_back(read_shard_file(in, "search", names));
  check_shard_set(files, "search", names);
  const ShardFile& first = files.front();
  const std::string where1 = first.shown + ":1";
  const ojson& id = first.identity;
  auto bad = [&](const std::string& what) -> void { throw InputError(where1, "\"identity\": " + what); };

  SizingRunResult r;
  r.identity = id;
  // The sizing's options as its identity records them (sizing_identity).
  if (!id.contains("scenario") || !id["scenario"].is_string()) bad("expected \"scenario\", a file name");
  if (!id.contains("document") || !id["document"].is_object()) bad("expected \"document\", the scenario");
  if (!id.contains("set") || !id["set"].is_array()) bad("expected \"set\", an array of assignments");
  std::vector<std::string> sets;
  for (const auto& s : id["set"]) {
    if (!s.is_string()) bad("\"set\" holds a value that is not a string");
    sets.push_back(s.get<std::string>());
  }
  if (!id.contains("candidates") || !id["candidates"].is_array() || id["candidates"].empty() ||
      id["candidates"].size() > 100000)
    bad("expected \"candidates\", a non-empty array");
  for (const auto& c : id["candidates"])
    if (!c.is_object() || !c.contains("gpu") || !c["gpu"].is_string() || !c.contains("tensor_parallel_size") ||
        !c["tensor_parallel_size"].is_number_integer())
      bad("each of \"candidates\" must be {\"gpu\": ..., \"tensor_parallel_size\": ...}");
  if (!id.contains("attainment") || !id["attainment"].is_number()) bad("expected \"attainment\", a number");
  if (!id.contains("seeds") || !id["seeds"].is_number_integer()) bad("expected \"seeds\", a whole number");
  if (!id.contains("max_replicas") || !id["max_replicas"].is_number_integer()) bad("expected \"max_replicas\", a whole number");
  if (!id.contains("prices") || !id["prices"].is_object()) bad("expected \"prices\", an object");
  if (!id.contains("procurement") || !id["procurement"].is_boolean()) bad("expected \"procurement\", true or false");
  SizingOptions so;
  so.goal.min_attainment = id["attainment"].get<double>();
  const int64_t seeds = id["seeds"].get<int64_t>();
  so.seeds = seeds >= 1 && seeds <= 100 ? static_cast<int>(seeds) : 0;
  so.max_replicas = id["max_replicas"].get<int64_t>();
  for (const auto& [gpu, usd] : id["prices"].items()) {
    if (!usd.is_number()) bad("\"prices\" holds a price that is not a number");
    so.price_per_gpu_hour_usd[gpu] = usd.get<double>();
  }
  try {
    check_sizing_options(so);
  } catch (const InputError& e) {
    bad(e.what());
  }
  const bool procurement = id["procurement"].get<bool>();
  const nlohmann::json doc = nlohmann::json::parse(id["document"].dump());
  const std::string file = id["scenario"].get<std::string>();
  double target = 1;
  try {
    r.inputs = inputs_of(doc, file, sets, names, &target);
  } catch (const InputError& e) {
    bad(std::string("\"document\": ") + e.what());
  }
  r.options = so;
  r.candidates = id["candidates"].size();
  const size_t n = r.candidates;

  std::map<size_t, const ShardFile*> owner;
  for (const ShardFile& s : files) {
    const auto count = s.header.find("candidates");
    if (count == s.header.end() || *count != n)
      throw InputError(s.shown + ":1", "expected \"candidates\": " + std::to_string(n) + ", the number of candidates");
    const auto listed = s.header.find("tasks");
    if (listed == s.header.end() || !listed->is_array() || listed->size() != s.records.size())
      throw InputError(s.shown + ":1", "expected \"tasks\", the index of each of its " +
                                           std::to_string(s.records.size()) + " record(s)");
    for (size_t k = 0; k < s.records.size(); ++k) {
      const auto& rec = s.records[k];
      SizingTask t = read_sizing_task_record(rec.json, rec.where, n, procurement);
      if ((*listed)[k] != t.index)
        throw InputError(rec.where, "holds task " + std::to_string(t.index) + " where the first line lists " +
                                        (*listed)[k].dump());
      if (!s.spec.holds(t.index % n))
        throw InputError(rec.where, "holds task " + std::to_string(t.index) + ", which is not a task of shard " +
                                        shard_label(s.spec) + " of " + std::to_string(n) + " candidates");
      if (const auto o = owner.find(t.index); o != owner.end())
        throw InputError(rec.where, "holds task " + std::to_string(t.index) + ", which " +
                                        (o->second == &s ? std::string("it holds twice") : o->second->shown + " holds too"));
      owner[t.index] = &s;
      r.tasks.emplace(t.index, std::move(t));
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!r.tasks.count(i))
      for (const ShardFile& s : files)
        if (s.spec.holds(i))
          throw InputError(s.shown, "lacks candidate " + std::to_string(i) + " of its shard: not a whole shard");
  std::string shown;
  for (const auto& f : files) shown += (shown.empty() ? "" : ", ") + f.shown;
  assemble(r, doc, procurement, target, "kvcap merge: the shards (" + shown + ")");
  return r;
}

}  // namespace kvcap
