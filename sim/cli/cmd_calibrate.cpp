// `kvcap calibrate`: turn kernel measurements into a cost-model profile.
//   --roofline --gpu G [--model M] --out FILE   spec-sheet profile, "measured": false
//   --fit-only RAW.json [--gpu G] --out FILE    refit a raw run (from kvcap-gpu-calibrate) without a GPU
//   --gpu G --out FILE                          measure here: runs kvcap-gpu-calibrate (beside this
//                                               binary) then fits; without a GPU: exit 2, see tools/gpu-check
// A raw run whose kernel checks failed never becomes a profile (exit 1).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/profile.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cost/profile_cost_model.hpp"
#include "sim/cost/roofline_profile.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"

namespace kvcap::cli {

namespace {

struct CalibrateOptions {
  bool roofline = false;
  std::string fit_only;
  std::string gpu;
  std::string model;
  std::string out;
  std::string command;
};

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

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
  if (!o.gpu.empty() && lower(o.gpu) != lower(raw.provenance.gpu_id))
    throw InputError("--gpu", "'" + o.gpu + "' differs from the raw run's gpu_id '" + raw.provenance.gpu_id + "'");
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
  const std::string cmd = "'" + h + "' --gpu-id '" + o.gpu + "' --out '" + raw + "'";
  const int status = std::system(cmd.c_str());
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  if (rc == 3) throw InputError("kvcap calibrate", "no usable CUDA GPU here. " + hint);
  if (rc == 1) throw CheckFailure("kernel checks failed on this GPU (see " + raw + "); no profile written");
  if (rc != 0) throw InputError("kvcap calibrate", "kvcap-gpu-calibrate exited with " + std::to_string(rc));
  return run_fit(o, raw);
}

int run_calibrate(const CalibrateOptions& o) {
  if (o.roofline && !o.fit_only.empty()) throw InputError("--roofline", "cannot be combined with --fit-only");
  if (o.out.empty()) throw InputError("--out", "needs a file to write the profile to");
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
  sub->callback([opts, &action] {
    opts->command = "kvcap calibrate";
    for (const auto& [name, val] : std::initializer_list<std::pair<const char*, const std::string*>>{
             {"--fit-only", &opts->fit_only}, {"--gpu", &opts->gpu}, {"--model", &opts->model}, {"--out", &opts->out}})
      if (!val->empty()) opts->command += std::string(" ") + name + " " + *val;
    if (opts->roofline) opts->command += " --roofline";
    action = [opts] { return run_calibrate(*opts); };
  });
}

}  // namespace kvcap::cli
