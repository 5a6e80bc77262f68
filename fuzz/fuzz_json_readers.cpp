// The JSON documents kvcap reads whole (one file = one object), one harness per reader:
//   kernel_profile  kernels/profiles/*.json, `kvcap calibrate` output (kernels/calibrate/profile.cpp)
//   raw_measurements  kvcap-gpu-calibrate's raw file, as `calibrate --fit-only` takes it
//                   (kernels/calibrate/raw_json.cpp), then fitted (fit.cpp) as a profile
//   engine_profile  scenarios/engine-profiles/*.json, `--engine-profile FILE` (sim/cost/engine_profile.cpp)
//   gpu             a GPU JSON file given as --gpu / "gpu" (sim/hw/gpu_load.cpp)
// The fuzz input is the file's text. What kvcap writes from an accepted input must read back:
// a profile or engine profile written out (and a profile fitted from a raw run) is read again,
// and an InputError there is a bug, not bad input. A raw run whose kernel checks failed ends in
// CheckFailure (exit 1), which is expected too.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/profile.hpp"
#include "kernels/calibrate/raw_json.hpp"
#include "sim/cost/engine_profile.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/util/json_parse.hpp"

using namespace kvcap;

namespace {

/// `what` wrote `j`; reading it back must not fail.
template <class Read>
void must_read_back(const char* what, const nlohmann::json& j, Read read) {
  try {
    (void)read(j, "written.json");
  } catch (const InputError& e) {
    fuzz::report_unexpected(what, (std::string("kvcap cannot read back what it wrote: ") + e.what()).c_str());
  }
}

}  // namespace

int fuzz::json_reader_input(std::string_view reader, const uint8_t* data, size_t size) {
  return fuzz::expect_input_errors([&] {
    const std::string origin = "input.json";
    const nlohmann::json doc = parse_json_text(fuzz::as_text(data, size), origin);
    if (reader == "kernel_profile") {
      must_read_back("profile_to_json", profile_to_json(profile_from_json(doc, origin)), profile_from_json);
    } else if (reader == "raw_measurements") {
      const RawRun raw = raw_from_json(doc, origin);
      Profile fitted;
      try {
        // `--fit-only` takes the ceilings of the raw run's GPU; the fuzzed gpu_id could name any
        // file, so every input is fitted for the catalog's H100 SXM.
        static const GpuSpec gpu = load_gpu("h100-sxm");
        fitted = fit_profile(raw, gpu.bf16_flops, gpu.hbm_bandwidth_bytes_per_s, origin);
      } catch (const CheckFailure&) {
        return;  // the run's kernel checks failed: no profile, exit 1
      }
      must_read_back("fit_profile", profile_to_json(fitted), profile_from_json);
    } else if (reader == "engine_profile") {
      const EngineProfile p = engine_profile_from_json(doc, origin);
      (void)p.describe();  // what every output prints about the profile
      (void)p.allreduce_latency_for("nvlink", 8);
      must_read_back("engine_profile_to_json", engine_profile_to_json(p), engine_profile_from_json);
    } else if (reader == "gpu") {
      (void)gpu_from_json(doc, origin);
    } else {
      fuzz::report_unexpected("harness", ("unknown JSON reader " + std::string(reader)).c_str());
    }
  });
}
