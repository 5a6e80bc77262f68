#include "sim/calibrate/serving_run.hpp"

#include <cctype>

#include "sim/metrics/percentile.hpp"

namespace kvcap {

LatencyStats latency_stats(std::vector<double> values) {
  LatencyStats s;
  if (values.empty()) return s;
  const Summary m = summarize(values);
  s.mean_s = m.mean;
  s.p50_s = m.p50;
  s.p90_s = m.p90;
  s.p99_s = m.p99;
  return s;
}

nlohmann::json scenario_for(const ServingRun& run, uint64_t seed) {
  nlohmann::json engine = run.engine_settings.is_object() ? run.engine_settings : nlohmann::json::object();
  engine["tensor_parallel_size"] = run.tensor_parallel_size;
  std::string description = "Replay of measured run " + run.id;
  if (!run.origin.empty()) description += " (" + run.origin + ")";
  description += ": " + run.engine + (run.engine_version.empty() ? "" : " " + run.engine_version);
  if (!run.model_id.empty() && run.model_id != run.model) description += ", " + run.model_id;
  description += " on " + run.gpu + " TP" + std::to_string(run.tensor_parallel_size) + ".";
  nlohmann::json doc = {
      {"name", run.id},
      {"description", description},
      {"model", run.model},
      {"gpu", run.gpu},
      {"engine", engine},
      {"workload", run.workload},
      {"seed", seed},
  };
  return doc;
}

std::string parse_engine_version(const std::string& text) {
  // Scan for a token: optional 'v', digits '.' digits [ '.' digits ], not glued to a letter/digit
  // before it. Accept "vX.Y" and "X.Y.Z" (a bare "X.Y" is too likely to be something else).
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const bool has_v = (text[i] == 'v' || text[i] == 'V');
    size_t j = has_v ? i + 1 : i;
    if (j >= n || !std::isdigit(static_cast<unsigned char>(text[j]))) continue;
    if (i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))) continue;
    int parts = 0;
    size_t k = j;
    while (true) {
      size_t d = k;
      while (d < n && std::isdigit(static_cast<unsigned char>(text[d]))) ++d;
      if (d == k) break;  // no digits: the previous '.' was not part of the version
      ++parts;
      k = d;
      if (k + 1 < n && text[k] == '.' && std::isdigit(static_cast<unsigned char>(text[k + 1])) && parts < 3) {
        ++k;
        continue;
      }
      break;
    }
    if (parts >= 3 || (has_v && parts >= 2)) return text.substr(j, k - j);
  }
  return "";
}

}  // namespace kvcap
