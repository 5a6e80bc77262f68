// `kvcap calibrate`: turn kernel measurements into a cost-model profile.
//   --roofline --gpu G [--model M] --out FILE   spec-sheet profile, "measured": false
//   --fit-only RAW.json [--gpu G] --out FILE    refit a raw run (from kvcap-gpu-calibrate) without a GPU
//   --gpu G --out FILE                          measure here: runs kvcap-gpu-calibrate (beside this
//                                               binary) then fits; without a GPU: exit 2, see tools/gpu-check
//   --serving --runs T.jsonl [--bench-serve R --setup S]... --out FILE
//                                               fit an engine profile (software terms) to measured
//                                               serving runs (sim/calibrate/engine_fit.hpp)
//   --extrapolate PROFILE --gpu G[,G...] --out-dir DIR
//                                               carry an engine profile's terms to other GPUs (marked
//                                               extrapolated)
// A raw run whose kernel checks failed never becomes a profile (exit 1).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/profile.hpp"
#include "sim/calibrate/calibration_set.hpp"
#include "sim/calibrate/fidelity.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cost/profile_cost_model.hpp"
#include "sim/cost/roofline_profile.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/run_program.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

namespace {

struct CalibrateOptions {
  bool roofline = false;
  bool serving = false;
  CalibrationInputs inputs;
  std::vector<std::string> bench, setups;
  std::string fit_terms;  ///< comma-separated; "" = every term the runs identify
  std::string start;      ///< starting engine profile (name or file); "" = built-in start
  std::string name;
  std::string cost_model;  ///< kernel cost model under the engine terms (JSON); "" = roofline
  std::string extrapolate;
  std::string out_dir;
  uint64_t seed = 1;
  int threads = 0;
  int max_iterations = 30;
  std::string fit_only;
  std::string gpu;
  std::string model;
  std::string out;
  std::string command;
};

void print_written(const Profile& p, const std::string& out) {
  std::cout << "wrote " << out << ": profile for " << p.gpu_id << ", " << profile_origin(p) << "\n";
  if (p.provenance.is_object() && p.provenance.contains("fit_skipped") && !p.provenance["fit_skipped"].empty())
    std::cout << "  not fitted (too few points): " << p.provenance["fit_skipped"].dump() << "\n";
  const auto& c = p.coefficients;
  std::cout << "  copy " << c.copy_bytes_per_s * 1e-9 << " GB/s; bf16 GEMM " << c.gemm_compute.rate * 1e-12
            << " TFLOP/s (fit rel rms " << c.gemm_compute.fit_rel_rms << ")\n";
  for (const auto& [dtype, r] : c.decode)
    std::cout << "  decode " << dtype << ": " << r.rate * 1e-9 << " GB/s + " << r.launch_s * 1e6
              << " us per launch (fit rel rms " << r.fit_rel_rms << ", " << r.points << " points)\n";
}

int run_roofline(const CalibrateOptions& o) {
  if (o.gpu.empty()) throw InputError("--roofline", "needs --gpu G (a catalog id or a GPU JSON file)");
  GpuSpec gpu = load_gpu(o.gpu);
  if (!o.model.empty()) load_model(o.model);  // an unknown model is an error, not a silent label
  Profile p = make_roofline_profile(gpu, RooflineEfficiency{}, o.model, o.command);
  write_profile_file(p, o.out);
  print_written(p, o.out);
  return 0;
}

int run_fit(const CalibrateOptions& o, const std::string& raw_path) {
  RawRun raw = read_raw_file(raw_path);
  if (!o.gpu.empty() && ascii_lower(o.gpu) != ascii_lower(raw.provenance.gpu_id))
    throw InputError("--gpu", quote_input(o.gpu) + " differs from the raw run's gpu_id " + quote_input(raw.provenance.gpu_id));
  GpuSpec gpu = load_gpu(raw.provenance.gpu_id);
  Profile p = fit_profile(raw, gpu.bf16_flops, gpu.hbm_bandwidth_bytes_per_s, raw_path);
  p.gpu_id = gpu.id;
  p.provenance["fitted_by"] = o.command;
  write_profile_file(p, o.out);
  print_written(p, o.out);
  return 0;
}

std::string harness_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  auto h = self.parent_path() / "kvcap-gpu-calibrate";
  return std::filesystem::exists(h, ec) ? h.string() : "";
}

int run_measure(const CalibrateOptions& o) {
  const std::string hint =
      "kvcap calibrate needs an NVIDIA GPU to measure; on a machine with one run tools/gpu-check (it builds "
      "kvcap-gpu-calibrate with nvcc -arch=sm_90, checks, sweeps and fits). Without a GPU use "
      "`kvcap calibrate --roofline --gpu G --out FILE` (spec sheet, not measured) or "
      "`kvcap calibrate --fit-only RAW.json --out FILE`.";
  const std::string h = harness_path();
  if (h.empty()) throw InputError("kvcap calibrate", "kvcap-gpu-calibrate was not built here (no nvcc). " + hint);
  if (o.gpu.empty()) throw InputError("kvcap calibrate", "needs --gpu G to label the measured GPU");
  const std::string raw = o.out + ".raw.json";
  // An argument vector, no shell: --gpu and --out reach the harness as they were typed, so a
  // value holding a quote or ';' cannot run a command.
  const ProgramExit e = run_program(h, {"--gpu-id", o.gpu, "--out", raw});
  if (!e.exited)
    throw InputError("kvcap calibrate", "kvcap-gpu-calibrate was killed by " + signal_name(e.signal) +
                                            "; no profile written");
  if (e.code == 3) throw InputError("kvcap calibrate", "no usable CUDA GPU here. " + hint);
  if (e.code == 1)
    throw CheckFailure("kernel checks failed on this GPU (see " + escape_text(raw) + "); no profile written");
  if (e.code != 0) throw InputError("kvcap calibrate", "kvcap-gpu-calibrate exited with " + std::to_string(e.code));
  return run_fit(o, raw);
}


/// Where a fit starts: mid-range values of each term's physical range (they are also what the
/// ridge pulls weakly identified terms toward; see EngineFitOptions::ridge).
EngineProfile default_start() {
  EngineProfile p;
  p.overheads.step_fixed_s = 1e-3;
  p.overheads.per_sequence_s = 5e-6;
  p.overheads.attention_seq_layer_s = 3e-7;
  p.overheads.piecewise_layer_s = 1e-5;
  p.overheads.moe_layer_s = 1e-5;
  p.allreduce_latency_s = {{"nvlink", 1e-5}};
  p.allreduce_rank_latency_s = {{"nvlink", 2e-6}};
  p.allreduce_bandwidth_fraction = {{"nvlink", 0.5}};
  p.front_end.per_request_s = 5e-3;
  p.front_end.per_prompt_token_s = 1e-6;
  return p;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string major_minor(const std::string& v) {
  const size_t a = v.find('.');
  if (a == std::string::npos) return v;
  const size_t b = v.find('.', a + 1);
  return b == std::string::npos ? v : v.substr(0, b);
}

int run_serving(CalibrateOptions& o) {
  if (o.bench.size() != o.setups.size())
    throw InputError("--setup", "give one --setup per --bench-serve (" + std::to_string(o.bench.size()) + " results, " +
                                    std::to_string(o.setups.size()) + " setups)");
  for (size_t i = 0; i < o.bench.size(); ++i) o.inputs.bench_serve.emplace_back(o.bench[i], o.setups[i]);
  std::vector<ServingRun> runs = read_calibration_inputs(o.inputs);
  // One profile is for one engine version on one GPU: mixing them would average different software.
  std::string gpu, engine, version;
  for (const auto& r : runs) {
    if (gpu.empty()) gpu = r.gpu, engine = r.engine, version = r.engine_version;
    if (ascii_lower(r.gpu) != ascii_lower(gpu))
      throw InputError(r.origin, "run on gpu " + quote_input(r.gpu) + " among runs on " + quote_input(gpu) +
                                     ": an engine profile is fitted per GPU (select runs with --only)");
    if (r.engine != engine || r.engine_version != version)
      throw InputError(r.origin, "run of " + excerpt(r.engine) + " " + excerpt(r.engine_version) + " among runs of " +
                                     excerpt(engine) + " " + excerpt(version) +
                                     ": an engine profile is fitted per engine version");
  }
  const GpuSpec g = load_gpu(gpu);
  EngineFitOptions fo;
  fo.start = o.start.empty() ? default_start() : load_engine_profile(o.start, "--start");
  fo.start.engine = engine;
  fo.start.engine_version = version;
  fo.start.gpu = g.id;
  fo.start.extrapolated = false;
  fo.start.derived_from.clear();
  fo.start.name = !o.name.empty() ? o.name : engine + "-" + (version.empty() ? "unknown" : major_minor(version)) + "-" + g.id;
  fo.terms = split_list(o.fit_terms);
  if (!o.cost_model.empty()) {
    fo.kernel_cost_model = parse_json_text(o.cost_model, "--cost-model");
    if (!fo.kernel_cost_model.is_object()) throw InputError("--cost-model", "expected a JSON object");
  }
  fo.seed = o.seed;
  fo.threads = o.threads;
  fo.max_iterations = o.max_iterations;
  fo.progress = [](const std::string& line) { std::cerr << "kvcap calibrate: " << line << "\n"; };
  std::cerr << "kvcap calibrate: fitting " << runs.size() << " runs on " << g.id << " (every trial replays each run)\n";
  EngineFitResult fit = fit_engine_profile(runs, fo);

  EngineProfile& p = fit.profile;
  p.allreduce_links_measured.clear();
  for (const auto& t : fit.fitted_terms)
    if (t.rfind("allreduce_latency_s.", 0) == 0) p.allreduce_links_measured.push_back(t.substr(t.find('.') + 1));
  nlohmann::json models = nlohmann::json::array(), tps = nlohmann::json::array();
  int64_t used = 0;
  for (const auto& rf : fit.runs) {
    const std::string m = rf.run->model_id.empty() ? rf.run->model : rf.run->model_id;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
    if (std::find(tps.begin(), tps.end(), rf.run->tensor_parallel_size) == tps.end())
      tps.push_back(rf.run->tensor_parallel_size);
    used += rf.used_in_fit ? 1 : 0;
  }
  nlohmann::json not_fitted = nlohmann::json::object();
  for (const auto& t : engine_fit_terms())
    if (std::find(fit.fitted_terms.begin(), fit.fitted_terms.end(), t.name) == fit.fitted_terms.end()) {
      const double v = get_term(p, t.name);
      if (t.name.rfind("allreduce_", 0) == 0 && p.allreduce_latency_s.count(t.name.substr(t.name.find('.') + 1)) == 0)
        continue;  // a link kind the profile does not cover
      not_fitted[t.name] = v;
    }
  p.provenance = {{"source", "kvcap calibrate --serving: bounded least squares (Levenberg-Marquardt) of replayed runs "
                             "against measured mean E2E, p99 E2E, mean TTFT and mean TPOT"},
                  {"sources", calibration_sources(o.inputs)},
                  {"runs", used},
                  {"runs_total", static_cast<int64_t>(runs.size())},
                  {"models", models},
                  {"tensor_parallel_sizes", tps},
                  {"gpu_name", g.name},
                  // The replay's description minus the engine profile it appends (" + ...").
                  {"kernel_cost_model", fit.runs.front().cost_model.substr(0, fit.runs.front().cost_model.find(" + "))},
                  {"fitted_terms", fit.fitted_terms},
                  {"not_fitted", not_fitted},
                  {"iterations", fit.iterations},
                  {"kvcap_version", KVCAP_VERSION},
                  {"command", o.command}};
  const FidelitySummary s = summarize_fidelity(fit.runs);
  const auto report = fidelity_json(fit.runs, s, fit.runs.front().cost_model);
  p.fit = {{"summary", report["summary"]}, {"runs", report["runs"]}};
  write_engine_profile_file(p, o.out);
  print_fidelity(std::cout, fit.runs, s, fit.runs.front().cost_model);
  std::cout << "\nwrote " << o.out << ": engine profile " << p.name << " (" << fit.fitted_terms.size()
            << " terms fitted to " << used << " runs, " << fit.iterations << " iterations)\n";
  for (const auto& t : fit.fitted_terms) std::cout << "  " << t << " = " << get_term(p, t) << "\n";
  return 0;
}

int run_extrapolate(const CalibrateOptions& o) {
  if (o.gpu.empty()) throw InputError("--extrapolate", "needs --gpu G[,G...]: the GPUs to carry the profile to");
  if (o.out_dir.empty()) throw InputError("--extrapolate", "needs --out-dir DIR");
  const EngineProfile base = load_engine_profile(o.extrapolate, "--extrapolate");
  if (base.extrapolated) throw InputError("--extrapolate", quote_input(base.name) + " is itself extrapolated: carry the fitted one");
  // Each profile is its own atomic file (sim/util/atomic_file.hpp) added to the folder, which may
  // hold others (scenarios/engine-profiles/): not an output set that replaces the folder.
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw InputError("--out-dir " + escape_text(o.out_dir), "cannot create the folder: " + ec.message());
  for (const auto& id : split_list(o.gpu)) {
    const GpuSpec g = load_gpu(id);
    EngineProfile p = base;
    p.gpu = g.id;
    p.extrapolated = true;
    p.derived_from = base.name;
    const std::string suffix = "-" + base.gpu;
    p.name = base.name.size() > suffix.size() && base.name.ends_with(suffix)
                 ? base.name.substr(0, base.name.size() - suffix.size()) + "-" + g.id
                 : base.name + "-" + g.id;
    p.fit = nlohmann::json::object();  // the residuals belong to the fitted GPU's runs
    p.provenance = {{"source", "extrapolated: the engine terms of " + base.name +
                                   " (fitted on " + base.gpu + ") carried over unchanged; no measured run on " + g.id},
                    {"derived_from", base.name},
                    {"gpu_name", g.name},
                    {"kvcap_version", KVCAP_VERSION},
                    {"command", o.command}};
    bool measured = false;
    p.allreduce_latency_for(g.interconnect_kind, 2, &measured);
    if (!measured)
      p.provenance["allreduce_note"] = "no " + g.interconnect_kind + " all-reduce was measured; the most pessimistic "
                                       "measured figures are used (likely still optimistic for " + g.interconnect_kind + ")";
    const std::string path = o.out_dir + "/" + p.name + ".json";
    write_engine_profile_file(p, path);
    std::cout << "wrote " << path << ": " << p.describe() << "\n";
  }
  return 0;
}

int run_calibrate(CalibrateOptions& o) {
  if (!o.extrapolate.empty()) return run_extrapolate(o);
  if (o.roofline && !o.fit_only.empty()) throw InputError("--roofline", "cannot be combined with --fit-only");
  if (o.out.empty()) throw InputError("--out", "needs a file to write the profile to");
  if (o.serving) {
    if (o.roofline || !o.fit_only.empty()) throw InputError("--serving", "cannot be combined with --roofline or --fit-only");
    return run_serving(o);
  }
  if (o.roofline) return run_roofline(o);
  if (!o.fit_only.empty()) return run_fit(o, o.fit_only);
  return run_measure(o);
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<CalibrateOptions>();
  auto* sub = app.add_subcommand("calibrate", "Write a cost-model profile: measured on this GPU, refit from raw "
                                              "measurements, or from the spec sheet (--roofline, not measured)");
  sub->add_flag("--roofline", opts->roofline, "Write a spec-sheet profile marked \"measured\": false");
  sub->add_option("--fit-only", opts->fit_only, "Refit a raw measurements file (kvcap-raw JSON) without a GPU");
  sub->add_option("--gpu", opts->gpu, "GPU catalog id or GPU JSON file");
  sub->add_option("--model", opts->model, "Model the profile is meant for (recorded in provenance)");
  sub->add_option("--out", opts->out, "Profile JSON to write");
  sub->add_flag("--serving", opts->serving, "Fit an engine profile to measured serving runs (--runs, --bench-serve)");
  add_repeatable(sub, "--runs", opts->inputs.tables, "Run table (JSONL) of measured serving runs (repeatable)");
  add_repeatable(sub, "--bench-serve", opts->bench, "A `vllm bench serve --save-result --save-detailed` result (repeatable)");
  add_repeatable(sub, "--setup", opts->setups, "The setup JSON of the --bench-serve result in the same position");
  add_repeatable(sub, "--only", opts->inputs.only, "Keep runs whose id contains this text (repeatable)");
  add_repeatable(sub, "--exclude", opts->inputs.exclude, "Drop runs whose id contains this text (repeatable; after --only)");
  sub->add_option("--fit", opts->fit_terms, "Engine terms to fit, comma-separated (default: those the runs identify)");
  sub->add_option("--start", opts->start, "Engine profile (name or file) to start from and take unfitted terms from");
  sub->add_option("--name", opts->name, "Name of the engine profile (default ENGINE-MAJOR.MINOR-GPU)");
  sub->add_option("--cost-model", opts->cost_model, "Kernel cost model under the engine terms, as scenario JSON "
                                                    "(default {\"kind\": \"roofline\"})");
  sub->add_option("--seed", opts->seed, "Seed of the replayed workloads")->capture_default_str();
  sub->add_option("--threads", opts->threads, "Replays at once (0 = one per core)")->capture_default_str();
  sub->add_option("--max-iterations", opts->max_iterations, "Levenberg-Marquardt iterations at most")
      ->capture_default_str();
  sub->add_option("--extrapolate", opts->extrapolate, "Carry this engine profile's terms to the --gpu list");
  sub->add_option("--out-dir", opts->out_dir, "Folder for --extrapolate's profiles");
  sub->callback([opts, &action] {
    opts->command = "kvcap calibrate";
    for (const auto& [name, val] : std::initializer_list<std::pair<const char*, const std::string*>>{
             {"--fit-only", &opts->fit_only}, {"--gpu", &opts->gpu}, {"--model", &opts->model}, {"--out", &opts->out},
             {"--fit", &opts->fit_terms}, {"--start", &opts->start}, {"--extrapolate", &opts->extrapolate},
             {"--out-dir", &opts->out_dir}})
      if (!val->empty()) opts->command += std::string(" ") + name + " " + *val;
    if (opts->roofline) opts->command += " --roofline";
    if (opts->serving) opts->command += " --serving";
    for (const auto& t : opts->inputs.tables) opts->command += " --runs " + t;
    for (const auto& b : opts->bench) opts->command += " --bench-serve " + b;
    action = [opts] { return run_calibrate(*opts); };
  });
}

}  // namespace kvcap::cli
