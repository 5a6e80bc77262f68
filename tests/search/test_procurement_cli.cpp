// The procurement report (issue #16 part 3): kvcap search --min-replicas --out writes sizing.md
// and sizing.html. Its figures are checked against second computations: the recommendation is
// search.json's cheapest row, $/month is $/hour x 730, $/M tokens is $/hour over the tokens
// search.json's answer served per hour, the headroom is what a separate load search at the same
// shape finds, and the 0.5x-load answer is a separate sizing at load_scale 0.5.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/util/text.hpp"
#include "tests/support/run_command.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string kvcap_out(const std::string& args) {
  const auto r = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' " + args +
                                       " 2>/dev/null");
  REQUIRE_MESSAGE(r.code == 0, args);
  return r.output;
}

/// The cells of the first table row in `md` after the line starting with `header`.
std::vector<std::string> first_row(const std::string& md, const std::string& header) {
  const size_t h = md.find(header);
  REQUIRE(h != std::string::npos);
  const size_t row = md.find('\n', md.find('\n', h) + 1) + 1;  // past the header and the --- line
  std::vector<std::string> cells;
  std::stringstream line(md.substr(row, md.find('\n', row) - row));
  std::string c;
  std::getline(line, c, '|');
  while (std::getline(line, c, '|')) {
    const size_t a = c.find_first_not_of(' '), b = c.find_last_not_of(' ');
    if (a != std::string::npos) cells.push_back(c.substr(a, b - a + 1));
  }
  return cells;
}

double dollars(const std::string& s) { return std::stod(s.substr(1)); }

}  // namespace

TEST_CASE("procurement report: recommendation, costs, headroom and sensitivity equal separate computations") {
  const fs::path dir = fs::temp_directory_path() / ("kvcap-procure-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string quick = "--model llama-3.1-8b --max-model-len 8192 --isl 1500 --osl 200 --request-rate 30 "
                            "--num-prompts 150 --ttft-p99 1 --tpot-p99 0.05 --quiet";
  kvcap_out("search --min-replicas --gpu h100,l40s --tp 1,2 " + quick + " --out '" + (dir / "s").string() + "'");
  const json sj = json::parse(read_text(dir / "s" / "search.json"));
  const std::string md = read_text(dir / "s" / "sizing.md");
  REQUIRE(fs::exists(dir / "s" / "sizing.html"));
  // The p50 / p99 pairs stay on one line in narrow columns (a phone showed "235.4", "/", "564.1").
  {
    const std::string html = read_text(dir / "s" / "sizing.html");
    const size_t cell = html.find("<td class=\"nw\">");
    REQUIRE(cell != std::string::npos);
    CHECK(html.substr(cell, html.find("</td>", cell) - cell).find(" / ") != std::string::npos);
    CHECK(html.find("td.nw{white-space:nowrap}") != std::string::npos);
  }
  const json& best = sj["candidates"][0];
  REQUIRE(best["found"] == true);
  const std::string shape = std::to_string(best["gpus"].get<int>()) + " x " + best["gpu"].get<std::string>() + " (TP" +
                            std::to_string(best["tensor_parallel_size"].get<int>()) + ", " +
                            std::to_string(best["replicas"].get<int>()) + " replica";
  CHECK(md.find("**" + shape) != std::string::npos);
  const auto row = first_row(md, "| GPU | TP | replicas |");
  REQUIRE(row.size() == 12);
  CHECK(row[0] == best["gpu"]);
  const auto cost = first_row(md, "| GPU | TP | GPUs | $/hour |");
  REQUIRE(cost.size() == 8);
  const double per_hour = best["cost_per_hour_usd"].get<double>();
  CHECK(dollars(cost[3]) == doctest::Approx(per_hour).epsilon(0.001));
  CHECK(dollars(cost[4]) == doctest::Approx(per_hour * 730).epsilon(0.001));
  const json& tp = sj["answer_results"]["throughput"];
  const double tokens_per_hour =
      (tp["input_tokens_per_s"].get<double>() + tp["output_tokens_per_s"].get<double>()) * 3600;
  CHECK(dollars(cost[5]) == doctest::Approx(per_hour / tokens_per_hour * 1e6).epsilon(0.01));
  // $/M input and $/M output: the whole $/hour over one kind's tokens per hour (not a split), worked
  // from search.json's answer: $/h / (tokens/s x 3600) x 1e6. Rounded to cents in the report, so
  // compared within half a cent.
  const double in_per_m = per_hour / (tp["input_tokens_per_s"].get<double>() * 3600) * 1e6;
  const double out_per_m = per_hour / (tp["output_tokens_per_s"].get<double>() * 3600) * 1e6;
  CHECK(std::fabs(dollars(cost[6]) - in_per_m) <= 0.005 + 1e-9);
  CHECK(std::fabs(dollars(cost[7]) - out_per_m) <= 0.005 + 1e-9);
  CHECK(out_per_m > in_per_m);  // 1500-token prompts, 200-token outputs: fewer output tokens carry the cost
  // The two do not add up to the blended price; each alone pays for the deployment.
  CHECK(md.find("not a split") != std::string::npos);
  // The cost-model sensitivity names the model in words, not as JSON (was: cost model {"engine_profile":...}).
  CHECK(md.find("| cost model: roofline kernels only (spec sheet, not measured; no engine profile) (the recommended "
                "shape only) |") != std::string::npos);
  CHECK(md.find("{\"") == std::string::npos);
  {
    const std::string html = read_text(dir / "s" / "sizing.html");
    CHECK(html.find("cost model: roofline kernels only (spec sheet, not measured; no engine profile)") != std::string::npos);
    CHECK(html.find("{&quot;") == std::string::npos);
    CHECK(html.find("{\"") == std::string::npos);
  }
  // p99 TTFT in ms, as search.json's answer has it in s.
  CHECK(row[4].substr(row[4].find("/ ") + 2) ==
        kvcap::format_plain(sj["answer_results"]["latency_s"]["ttft"]["p99"].get<double>() * 1000));
  // Headroom: a load search of the same deployment from the target load, 5% brackets.
  const json ls = json::parse(kvcap_out("search --gpu " + best["gpu"].get<std::string>() + " --tp " +
                                        std::to_string(best["tensor_parallel_size"].get<int>()) +
                                        " --set deployment.replicas=" + std::to_string(best["replicas"].get<int>()) +
                                        " --precision 0.05 --max-probes 16 --max-scale 16 --seeds 1 " + quick + " --json"));
  char headroom[48];
  const double passed = ls["capacity"]["load_scale"].get<double>();
  if (passed == 1)  // the first step above the target failed: the headroom is below that step
    std::snprintf(headroom, sizeof headroom, "under +%.1f%%", 100 * (ls["capacity"]["first_failing_scale"].get<double>() - 1));
  else
    std::snprintf(headroom, sizeof headroom, "+%.1f%%", 100 * (passed - 1));
  CHECK(row[10] == headroom);
  CHECK(row[11] == ls["limit"]["wall"]);
  // Half the load: a separate sizing at load_scale 0.5 gives the same cheapest deployment.
  const json half = json::parse(
      kvcap_out("search --min-replicas --gpu h100,l40s --tp 1,2 --set load_scale=0.5 " + quick + " --json"));
  const json& hb = half["candidates"][0];
  const std::string half_shape = std::to_string(hb["gpus"].get<int>()) + " x " + hb["gpu"].get<std::string>() + " (TP" +
                                 std::to_string(hb["tensor_parallel_size"].get<int>()) + ", ";
  CHECK(md.find("| 0.5x load | " + half_shape) != std::string::npos);
  CHECK(md.find("$/month = $/hour x 730") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("sizing with --seeds K: a replica count passes only when every seed's traffic meets the SLO") {
  // Bursty traffic at 20 req/s: one H100 meets the SLO for seeds 1, 2 and 4 but not for seed 3
  // (separate sizings below), so sizing over seeds 1-2 keeps one replica, over seeds 1-3 needs two.
  const std::string quick = "--model llama-3.1-8b --gpu h100 --max-model-len 8192 --isl 1500 --osl 200 "
                            "--request-rate 20 --burstiness 0.5 --num-prompts 120 --ttft-p99 0.5 --tpot-p99 0.04 --quiet";
  auto replicas = [&](const std::string& extra) {
    const json out = json::parse(kvcap_out("search --min-replicas " + quick + " " + extra + " --json"));
    return out.at("candidates").at(0);
  };
  std::vector<int64_t> per_seed;
  for (int s = 1; s <= 3; ++s) per_seed.push_back(replicas("--set seed=" + std::to_string(s)).at("replicas").get<int64_t>());
  REQUIRE(per_seed == std::vector<int64_t>{1, 1, 2});
  const json two = replicas("--seeds 2");
  CHECK(two.at("replicas") == 1);
  const json three = replicas("--seeds 3");
  CHECK(three.at("replicas") == 2);  // the largest of the seeds' own answers
  // Probes carry the count of seeds that passed and the worst seed's run: one replica failed for
  // seed 3 alone, two passed for all three.
  bool saw_one = false;
  for (const auto& p : three.at("probes")) {
    CHECK(p.at("seeds") == 3);
    if (p.at("replicas") == 1) {
      saw_one = true;
      CHECK(p.at("pass") == false);
      CHECK(p.at("seeds_passed") == 2);
      CHECK(p.at("worst_seed") == 3);
    }
  }
  CHECK(saw_one);
  const json best = three.at("probes").at(three.at("best_probe").get<size_t>());
  CHECK(best.at("seeds_passed") == 3);
  const auto text = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN +
                                          "' search --min-replicas " + quick + " --seeds 3 2>&1");
  CHECK(text.output.find("met with every one of 3 workload seeds") != std::string::npos);
  const auto bad = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN +
                                         "' search --min-replicas " + quick + " --seeds 0 2>&1");
  CHECK(bad.code == 2);
  CHECK(bad.output.find("--seeds") != std::string::npos);
}
