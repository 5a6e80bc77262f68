#include "sim/report/run_outputs.hpp"

#include <ostream>

#include "sim/report/run_report.hpp"
#include "sim/results/results.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

const std::vector<std::string>& run_output_names() {
  static const std::vector<std::string> names = {"results.json", "vllm-bench.json", "requests.csv", "timeseries.csv",
                                                        "report.html"};
  return names;
}

void write_run_outputs(OutputFolder& out, const RunResults& results, const ojson& document, const ojson& vllm_bench,
                       const Simulation& sim, const MetricsCollector& m) {
  out.write("results.json", [&](std::ostream& os) { os << document.dump(2) << "\n"; });
  out.write("vllm-bench.json", [&](std::ostream& os) { os << vllm_bench.dump(2) << "\n"; });
  out.write("requests.csv", [&](std::ostream& os) { write_requests_csv(os, m); });
  out.write("timeseries.csv", [&](std::ostream& os) { write_timeseries_csv(os, sim); });
  out.write("report.html", [&](std::ostream& os) { write_run_report_html(os, results, sim, m); });
}

}  // namespace kvcap
