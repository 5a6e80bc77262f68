// `kvcap search` end to end: exit codes, outputs, determinism.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/report/html_text.hpp"
#include "sim/search/capacity_search.hpp"
#include "sim/search/search_report.hpp"
#include "tests/search/search_fixtures.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;
using namespace kvcap::searchtest;
namespace fs = std::filesystem;

namespace {

/// kvcap's exit code, stdout and stderr.
using CliRun = cli_test::SplitRun;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// A scratch folder for this process, removed at exit.
fs::path temp_dir() {
  struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("kvcap-search-test-" + std::to_string(::getpid()));
    Scratch() { fs::create_directories(dir); }
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

CliRun run_cli(const std::string& args) { return cli_test::run_kvcap_split(args, "search-cli", false); }

/// The hand-worked scenarios of test_load_search.cpp / test_sizing.cpp as files.
std::string write_scenario(const std::string& name, const json& doc) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << doc.dump(2);
  return p.string();
}

json service_bound() {
  return constant_scenario(even_requests(200, 1.0, 16, 4), 0.01,
                           {{"max_num_seqs", 1}, {"num_gpu_blocks", 64}, {"max_model_len", 256}},
                           {{"ttft_p99_s", 0.015}});
}

}  // namespace

TEST_CASE("search is deterministic: two searches give the same JSON") {
  const LoadSearchOptions o;
  const SearchInputs in{"hand.json", "hand-worked", SloConfig{0.015, 0, 0}, {}, {}};
  const std::string a = load_search_json(search_max_load(service_bound(), "hand.json", o), o, in).dump();
  const std::string b = load_search_json(search_max_load(service_bound(), "hand.json", o), o, in).dump();
  CHECK(a == b);
  CHECK(a.find("\"capacity_results\":{") != std::string::npos);
}

TEST_CASE("kvcap search: hand-worked capacity, --out files byte-identical across runs") {
  const std::string file = write_scenario("service.json", service_bound());
  const std::string d1 = (temp_dir() / "out1").string(), d2 = (temp_dir() / "out2").string();
  const CliRun r = run_cli("search " + file + " --seeds 1 --out " + d1);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("capacity: 2") != std::string::npos);  // ~25 requests/s
  CHECK(r.out.find("batch limit (max_num_seqs)") != std::string::npos);
  REQUIRE(run_cli("search " + file + " --seeds 1 --out " + d2).code == 0);
  const std::string j1 = slurp(fs::path(d1) / "search.json");
  CHECK(j1 == slurp(fs::path(d2) / "search.json"));
  CHECK(slurp(fs::path(d1) / "search.csv") == slurp(fs::path(d2) / "search.csv"));
  // search.html: the attainment chart, byte-identical too.
  const std::string html = slurp(fs::path(d1) / "search.html");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html == slurp(fs::path(d2) / "search.html"));
  const json doc = json::parse(j1);
  CHECK(doc["probes"].size() == 12);
  CHECK(doc["capacity"]["load_scale"].get<double>() <= 25.016);
  CHECK(doc["capacity_results"]["requests"]["met_slo"] == 200);
  CHECK(doc["limit"]["wall"] == "batch_limit");
  // CSV: header + one row per probe.
  const std::string csv = slurp(fs::path(d1) / "search.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 13);
  // One seed: no seed column, no figures over seeds (test_seeds_cli.cpp has the several-seed files).
  CHECK(csv.rfind("index,load_scale,", 0) == 0);
  CHECK(html.find("id=\"seed-answer\"") == std::string::npos);

  const CliRun js = run_cli("search " + file + " --json --precision 0.1 --seeds 1");
  REQUIRE(js.code == 0);
  CHECK(json::parse(js.out)["search"] == "max_load");
}

TEST_CASE("kvcap search --min-replicas: sizing table with a price override") {
  json doc = constant_scenario(even_requests(200, 1.0, 16, 4), 0.01,
                               {{"max_num_seqs", 1}, {"num_gpu_blocks", 64}, {"max_model_len", 256}},
                               {{"ttft_p99_s", 0.015}});
  doc["load_scale"] = 87.5;  // needs 4 replicas (test_sizing.cpp)
  const std::string file = write_scenario("four.json", doc);
  const CliRun r = run_cli("search " + file + " --min-replicas --gpu h100-sxm,h200 --tp 1 --max-replicas 8 "
                         "--price-per-gpu-hour h200=3.5");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("answer: 4 x h200 TP1 = 4 GPUs at 14.00 USD/h") != std::string::npos);
  CHECK(r.out.find("price from --price-per-gpu-hour") != std::string::npos);
  CHECK(r.out.find("prices: catalog") != std::string::npos);
  // A shape that cannot be built is a row, not a failure; its long message keeps the table intact.
  const CliRun tp3 = run_cli("search " + file + " --min-replicas --tp 1,3 --max-replicas 8");
  REQUIRE(tp3.code == 0);
  CHECK(tp3.out.find("  does not fit: ") != std::string::npos);
  CHECK(tp3.out.find("do not split evenly over 3 GPUs\nanswer: 4 x h200 TP1 = 4 GPUs at 25.40 USD/h") != std::string::npos);
  const CliRun js = run_cli("search " + file + " --min-replicas --json --max-replicas 8");
  REQUIRE(js.code == 0);
  const json out = json::parse(js.out);
  CHECK(out["candidates"].size() == 1);  // the scenario's own GPU and TP
  CHECK(out["candidates"][0]["gpu"] == "h200");
  CHECK(out["candidates"][0]["replicas"] == 4);
  CHECK(out["answer_results"]["scenario"]["replicas"] == 4);
  CHECK(out["answer_results"]["requests"]["met_slo"] == 200);
}

TEST_CASE("kvcap search on a shipped scenario: exit 0 and an answer line") {
  const std::string scenario = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic-roofline.json";
  const CliRun r = run_cli("search " + scenario + " --set workload.duration_s=10 --precision 0.1 --seeds 1");
  CHECK(r.code == 0);
  CHECK(r.out.find("capacity: ") != std::string::npos);
  CHECK(r.out.find("limited by") != std::string::npos);
}

TEST_CASE("kvcap search: bad flags and scenarios are exit 2 naming the problem") {
  const std::string file = write_scenario("service.json", service_bound());
  auto fails_naming = [](const CliRun& r, const std::string& what) {
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find(what) != std::string::npos, r.err);
  };
  fails_naming(run_cli("search " + file + " --attainment 1.5"), "--attainment");
  fails_naming(run_cli("search " + file + " --attainment 0"), "--attainment");
  fails_naming(run_cli("search " + file + " --precision -1"), "--precision");
  fails_naming(run_cli("search " + file + " --min-replicas --gpu no-such-gpu"), "--gpu");
  fails_naming(run_cli("search " + file + " --min-replicas --tp 0"), "--tensor-parallel-size");
  fails_naming(run_cli("search " + file + " --min-replicas --price-per-gpu-hour h200"), "--price-per-gpu-hour");
  fails_naming(run_cli("search " + file + " --min-replicas --price-per-gpu-hour h200=-2"), "--price-per-gpu-hour");
  // Without --min-replicas, --gpu and --tp set the scenario's GPU and TP (vLLM's flags): a list
  // is a sizing question.
  fails_naming(run_cli("search " + file + " --gpu h200,h100"), "--min-replicas");
  fails_naming(run_cli("search " + file + " --tp 1,2"), "--min-replicas");
  fails_naming(run_cli("search " + file + " --price-per-gpu-hour h200=2"), "--min-replicas");
  json noslo = service_bound();
  noslo.erase("slo");
  fails_naming(run_cli("search " + write_scenario("noslo.json", noslo)), "/slo");
  // The library's message names the scenario's SLO fields; the command line adds its flags.
  fails_naming(run_cli("search " + write_scenario("noslo.json", noslo)), "slo.ttft_p99_s 2");
  fails_naming(run_cli("search " + write_scenario("noslo.json", noslo)), "--ttft-p99 2 --tpot-p99 0.1");
  fails_naming(run_cli("search " + write_scenario("noslo.json", noslo) + " --min-replicas"), "/slo");
}

TEST_CASE("search's wall and the run's own (results.json, the summary, report.html) are one rule's verdict") {
  // The first failing probe of a search, rerun by kvcap run at its load_scale, names the same wall
  // everywhere: search's limit, results.json's wall, the text summary and report.html.
  const std::string scenario = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic-roofline.json";
  const CliRun s = run_cli("search " + scenario + " --set workload.duration_s=10 --precision 0.1 --seeds 1 --json --quiet");
  REQUIRE(s.code == 0);
  const json sj = json::parse(s.out);
  REQUIRE(sj["limit"].is_object());
  const double scale = sj["limit"]["load_scale"].get<double>();
  const std::string out = std::string(KVCAP_SOURCE_DIR) + "/build-wall-test-" + std::to_string(::getpid());
  char scale_text[64];
  std::snprintf(scale_text, sizeof scale_text, "%.17g", scale);
  const CliRun r = run_cli("run " + scenario + " --set workload.duration_s=10 --set load_scale=" + scale_text +
                           " --out " + out + " --quiet");
  REQUIRE(r.code == 0);
  std::ifstream rf(out + "/results.json");
  const json res = json::parse(rf);
  CHECK(res["wall"]["wall"] == sj["limit"]["wall"]);
  CHECK(res["wall"]["explanation"] == sj["limit"]["explanation"]);
  CHECK(r.out.find("wall       " + sj["limit"]["explanation"].get<std::string>()) != std::string::npos);
  std::ifstream hf(out + "/report.html");
  std::stringstream html;
  html << hf.rdbuf();
  CHECK(html.str().find("Wall, by the rule kvcap search uses too") != std::string::npos);
  CHECK(html.str().find(kvcap::report::escape_html(sj["limit"]["explanation"].get<std::string>())) != std::string::npos);
  std::filesystem::remove_all(out);
}
