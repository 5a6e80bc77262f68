// Scenario files (sim/scenario/scenario.cpp) as `kvcap run SCENARIO --set ...` reads them, up to
// the request stream: JSON text -> --set overrides -> ScenarioSettings -> the workload's source
// factory (workloads/workload_spec.cpp, every kind) -> the first requests of the stream.
//
// Input: the scenario's JSON text, then optionally NUL-separated --set assignments
// ("{...}\0engine.block_size=32\0load_scale=2").
//
// Trace and empirical-distribution paths are resolved as for a scenario in <sandbox>/s/: the
// sandbox holds the shipped traces' first rows under the names the shipped scenarios use
// (s/traces/... and traces/... for ../traces/...). Inputs with a path that could leave the
// sandbox (absolute, or ".." beyond one leading "../") are skipped, so a run never reads the
// machine's other files.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/json_parse.hpp"
#include "workloads/io/line_reader.hpp"
#include "workloads/workload_spec.hpp"

using namespace kvcap;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kRequestsPulled = 200;
constexpr int kTraceRowsKept = 64;

std::string g_scenario_file;  // <sandbox>/s/scenario.json (never written: only its folder counts)

void copy_trace_head(const fs::path& from, const std::vector<fs::path>& to) {
  LineReader lines(from.string());
  std::string head;
  std::string_view line;
  for (int i = 0; i <= kTraceRowsKept && lines.next(line); ++i) head.append(line).push_back('\n');
  for (const fs::path& p : to) {
    gzFile f = gzopen(p.c_str(), "wb");
    if (!f) fuzz::report_unexpected("harness setup", ("cannot write " + p.string()).c_str());
    gzwrite(f, head.data(), static_cast<unsigned>(head.size()));
    gzclose(f);
  }
}

void make_sandbox() {
  char tmpl[] = "/tmp/kvcap-fuzz-scenario-XXXXXX";
  if (!::mkdtemp(tmpl)) fuzz::report_unexpected("harness setup", "mkdtemp failed");
  static const fs::path root = tmpl;
  fs::create_directories(root / "s" / "traces");
  fs::create_directories(root / "traces");
  for (const auto& e : fs::directory_iterator(fs::path(KVCAP_SOURCE_DIR) / "scenarios" / "traces")) {
    if (e.path().extension() != ".gz") continue;
    copy_trace_head(e.path(), {root / "s" / "traces" / e.path().filename(), root / "traces" / e.path().filename()});
  }
  g_scenario_file = (root / "s" / "scenario.json").string();
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(root, ec);
  });
}

bool stays_in_sandbox(const std::string& s) {
  if (s.starts_with('/')) return false;
  const std::string_view rest = s.starts_with("../") ? std::string_view(s).substr(3) : std::string_view(s);
  return rest.find("..") == std::string_view::npos;
}

bool all_strings_stay_in_sandbox(const nlohmann::json& j) {
  if (j.is_string()) return stays_in_sandbox(j.get_ref<const std::string&>());
  if (j.is_structured())
    for (const auto& v : j)
      if (!all_strings_stay_in_sandbox(v)) return false;
  return true;
}

}  // namespace

void fuzz::scenario_setup() { make_sandbox(); }

int fuzz::scenario_input(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_text(data, size);
  return fuzz::expect_input_errors([&] {
    const size_t nul = input.find('\0');
    nlohmann::json doc = parse_json_text(input.substr(0, nul), g_scenario_file);
    for (size_t at = nul; at != std::string_view::npos;) {
      const size_t next = input.find('\0', at + 1);
      apply_override(doc, std::string(input.substr(at + 1, next == std::string_view::npos ? next : next - at - 1)),
                     "set");
      at = next;
    }
    if (!all_strings_stay_in_sandbox(doc)) return;
    (void)doc.dump();  // results.json and sweep points write the scenario's strings: UTF-8 only
    const ScenarioSettings s = parse_scenario(doc, g_scenario_file);
    WorkloadContext ctx;
    ctx.file = s.file;
    ctx.base_dir = s.base_dir;
    ctx.max_model_len = s.engine.max_model_len > 0 ? s.engine.max_model_len : 131072;
    ctx.seed = s.seed;
    const SourceFactory factory = parse_workload(s.workload, ctx);
    fuzz::check_request_stream(*factory(), kRequestsPulled);
  });
}
