// Readers that take a file path (JSONL tables, bench results, baselines), one harness per
// reader. The fuzz input becomes the file
// (fuzz::InputFile), so the readers' own file handling (gzip, CRLF, BOM, line numbers) is in play:
//   serving_runs   scenarios/calibration/*.jsonl (`kvcap calibrate --serving --runs`, `kvcap fidelity`)
//   startup_logs   scenarios/memory/vllm-startup-logs.jsonl (`kvcap fidelity --startup-logs`)
//   bench_serve    `vllm bench serve --save-result --save-detailed` output with its setup
//                  (`--bench-serve R.json --setup S.json`): input = setup JSON, a NUL byte, result
//   baseline       scenarios/baselines/*.json (`kvcap check`)
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "sim/calibrate/bench_serve_result.hpp"
#include "sim/calibrate/serving_run_table.hpp"
#include "sim/calibrate/startup_log.hpp"
#include "sim/check/baseline.hpp"
#include "sim/util/json_parse.hpp"

using namespace kvcap;

int fuzz::file_reader_input(std::string_view reader, const uint8_t* data, size_t size) {
  static fuzz::InputFile file;
  const std::string_view input = fuzz::as_text(data, size);
  return fuzz::expect_input_errors([&] {
    if (reader == "serving_runs") {
      (void)read_serving_run_table_full(file.write(input));
    } else if (reader == "startup_logs") {
      (void)read_startup_logs(file.write(input));
    } else if (reader == "bench_serve") {
      const size_t nul = input.find('\0');
      const std::string_view setup = input.substr(0, nul);
      const std::string_view result = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
      const std::string& path = file.write(result);
      (void)read_bench_serve_result(path, parse_json_text(setup, "setup.json"), "setup.json");
    } else if (reader == "baseline") {
      (void)load_baseline(file.write(input));
    } else {
      fuzz::report_unexpected("harness", ("unknown file reader " + std::string(reader)).c_str());
    }
  });
}
