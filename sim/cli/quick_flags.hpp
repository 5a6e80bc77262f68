#pragma once
// The scenario a run or search works on: the file given, or one built from `vllm bench serve`-style
// flags (sim/cli/quick_scenario.hpp) when none is; then the --set assignments and the engine
// flags. --ttft-p99/--tpot-p99/--e2e-p99 (or vLLM's --goodput ttft:MS) set the SLO either way;
// --save-scenario writes the document that ran.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/engine_flags.hpp"
#include "sim/cli/flag_names.hpp"
#include "sim/cli/quick_scenario.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

struct QuickFlags {
  QuickWorkload w;
  bool dataset_given = false, lengths_given = false, rate_given = false, count_given = false;
  std::optional<double> ttft_s, tpot_s, e2e_s;
  std::vector<std::string> goodput;  ///< vLLM's KEY:MS pairs
  std::string save_scenario;
  bool builds_workload() const { return dataset_given || lengths_given || rate_given || count_given || w.max_concurrency; }
};

inline void add_quick_flags(CLI::App* cmd, QuickFlags& q) {
  auto* grp = cmd;
  grp->add_option_function<std::string>(
         "--dataset", [&q](const std::string& v) { q.w.dataset = v, q.dataset_given = true; },
         std::string("without a scenario file: the requests (") + quick_dataset_names() +
             "; vLLM bench --dataset-name; default random)");
  grp->add_option_function<int64_t>(
         "--isl,--random-input-len", [&q](int64_t v) { q.w.input_len = v, q.lengths_given = true; },
         "without a scenario file: prompt tokens per request (random dataset)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  grp->add_option_function<int64_t>(
         "--osl,--random-output-len", [&q](int64_t v) { q.w.output_len = v, q.lengths_given = true; },
         "without a scenario file: output tokens per request (random dataset)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  grp->add_option_function<int64_t>(
         "--num-prompts", [&q](int64_t v) { q.w.num_prompts = v, q.count_given = true; },
         "without a scenario file: requests to send (vLLM bench's default 1000)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  grp->add_option_function<double>(
         "--request-rate", [&q](double v) { q.w.request_rate = v, q.rate_given = true; },
         "without a scenario file: requests per second, Poisson (default: all at once, vLLM's inf; search starts "
         "from 1)");
  grp->add_option("--burstiness", q.w.burstiness, "with --request-rate: gamma shape of the gaps (vLLM's; 1 = Poisson)");
  grp->add_option_function<int64_t>(
         "--max-concurrency", [&q](int64_t v) { q.w.max_concurrency = v; },
         "without a scenario file and --request-rate: a closed loop of this many clients")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}));
  grp->add_option("--ttft-p99", q.ttft_s, "SLO: seconds to the first token (slo.ttft_p99_s)")->check(CLI::PositiveNumber);
  grp->add_option("--tpot-p99", q.tpot_s, "SLO: seconds per output token after the first (slo.tpot_p99_s)")
      ->check(CLI::PositiveNumber);
  grp->add_option("--e2e-p99", q.e2e_s, "SLO: seconds end to end (slo.e2e_p99_s)")->check(CLI::PositiveNumber);
  grp->add_option("--goodput", q.goodput, "SLO as vLLM bench writes it: ttft:MS tpot:MS e2el:MS (milliseconds)")
      ->expected(1, 3);
  grp->add_option("--save-scenario", q.save_scenario,
                  "write the scenario that ran (file or built, with --set and the flags applied) to this file");
}

/// Folder of the shipped traces: $KVCAP_DATA_DIR, else the source tree's scenarios/.
inline std::string quick_data_dir() {
  if (const char* d = std::getenv("KVCAP_DATA_DIR"); d && *d) return d;
#ifdef KVCAP_DATA_DIR
  return KVCAP_DATA_DIR;
#else
  return "scenarios";
#endif
}

/// The SLO flags as --set assignments (vLLM's --goodput in ms, or ours in s; not both for one bound).
inline std::vector<std::string> slo_sets(const QuickFlags& q) {
  std::optional<double> ttft = q.ttft_s, tpot = q.tpot_s, e2e = q.e2e_s;
  for (const auto& g : q.goodput) {
    const auto colon = g.find(':');
    const std::string key = colon == std::string::npos ? g : g.substr(0, colon);
    const std::string text = colon == std::string::npos ? "" : g.substr(colon + 1);
    const double ms = parse_finite_number(text).value_or(NAN);
    if (!(ms > 0))
      throw InputError("--goodput", "expected KEY:MILLISECONDS with KEY ttft, tpot or e2el (e.g. ttft:2000), got " +
                                        quote_input(g));
    std::optional<double>* slot = key == "ttft" ? &ttft : key == "tpot" ? &tpot : key == "e2el" ? &e2e : nullptr;
    if (!slot) throw InputError("--goodput", "unknown metric " + quote_input(key) + " (expected ttft, tpot or e2el)");
    if (*slot) throw InputError("--goodput", quote_input(key) + " is bounded twice (--goodput and --" +
                                                 (key == "e2el" ? std::string("e2e") : key) + "-p99, or twice in --goodput)");
    *slot = ms / 1000;
  }
  std::vector<std::string> out;
  if (ttft) out.push_back("slo.ttft_p99_s=" + format_number(*ttft));
  if (tpot) out.push_back("slo.tpot_p99_s=" + format_number(*tpot));
  if (e2e) out.push_back("slo.e2e_p99_s=" + format_number(*e2e));
  return out;
}

struct CommandScenario {
  nlohmann::json doc;
  std::string origin;              ///< the file, or "command line" for a built one
  std::vector<std::string> sets;   ///< every assignment applied, in order
};

/// The document to run. `gpu_and_tp_in_sets` false (search --min-replicas): --gpu and --tp are
/// lists the caller sizes over, and a built scenario takes the first GPU of the list.
inline CommandScenario command_scenario(const std::string& file, const EngineFlags& e, const QuickFlags& q,
                                        const std::vector<std::string>& user_sets, bool gpu_and_tp_in_sets = true) {
  CommandScenario c;
  std::vector<std::string> sets = engine_flag_sets(e, user_sets, gpu_and_tp_in_sets);
  for (const auto& s : slo_sets(q)) {
    for (const auto& u : user_sets)
      if (u.starts_with(s.substr(0, s.find('=') + 1)))
        throw InputError("--set " + u, "and an SLO flag both set " + s.substr(0, s.find('=')) + ": give one of them");
    sets.push_back(s);
  }
  if (!file.empty()) {
    if (q.builds_workload())
      throw InputError(q.lengths_given ? "--isl" : q.dataset_given ? "--dataset" : q.rate_given ? "--request-rate"
                                         : q.count_given ? "--num-prompts" : "--max-concurrency",
                       "builds a workload for a run without a scenario file; " + file +
                           " has its own (change it with --set workload.…)");
    c.doc = read_json_file(file);
    c.origin = file;
  } else {
    const std::string gpu = e.gpu.substr(0, e.gpu.find(','));
    c.doc = quick_scenario(command_line_path(e.model), command_line_path(gpu), q.w, quick_data_dir());
    c.origin = "command line";
  }
  for (const auto& s : sets) apply_override(c.doc, s, flag_name("set"));
  c.sets = sets;
  if (!q.save_scenario.empty()) {
    // In the order the scenario format documents its keys (scenarios/README.md), unknown ones last.
    nlohmann::ordered_json out;
    for (const char* k : {"name", "description", "model", "gpu", "engine", "deployment", "cost_model", "workload",
                          "slo", "metrics", "horizon_s", "load_scale", "seed"})
      if (c.doc.contains(k)) out[k] = c.doc[k];
    for (const auto& [k, v] : c.doc.items())
      if (!out.contains(k)) out[k] = v;
    std::error_code ec;  // a folder named for the file is made, as --out makes its own
    if (const auto parent = std::filesystem::path(q.save_scenario).parent_path(); !parent.empty())
      std::filesystem::create_directories(parent, ec);
    AtomicFile f(q.save_scenario);
    f.stream() << out.dump(2) << "\n";
    f.commit();
  }
  return c;
}

}  // namespace kvcap::cli
