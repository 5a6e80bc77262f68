#pragma once
// A minimal scenario around a trace workload, run through the binary with a time bound: for the
// tests of what kvcap does with the paths and text a scenario carries.
#include <chrono>
#include <string>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace cli_test {

/// A scenario whose workload is the trace at `trace_path`, priced by `cost_model` (JSON text).
inline std::string trace_scenario(const std::string& trace_path,
                                  const std::string& cost_model = R"({"kind": "roofline"})") {
  return R"({"name": "safety", "model": "llama-3.1-8b", "gpu": "h200", "cost_model": )" + cost_model +
         R"(, "workload": {"kind": "trace", "path": ")" + trace_path + R"("}, "seed": 1})";
}

/// A shipped trace, for scenarios whose trace is not what is being tested.
inline std::string shipped_trace() {
  return std::string(KVCAP_SOURCE_DIR) + "/scenarios/traces/mooncake_synthetic_trace.jsonl.gz";
}

struct TimedResult {
  int code = -1;        ///< 124: timeout(1) stopped it (a hang)
  std::string output;   ///< stdout and stderr
  double seconds = 0;
};

/// `kvcap run` on `text` written to `dir`/scenario.json, stopped by timeout(1) after 60 s so that
/// a hang fails the test instead of stalling the suite.
inline TimedResult run_scenario_text(const test_support::TempDir& dir, const std::string& text) {
  const std::string path = dir.write("scenario.json", text);
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_command("timeout 60 " + std::string(KVCAP_BIN) + " run " + path + " --out " +
                                (dir.path / "out").string() + " 2>&1");
  return {r.code, r.output, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

}  // namespace cli_test
