// Runs and searches without a scenario file (issue #17 part 2): `vllm bench serve`-style flags
// build the scenario, --save-scenario writes it, and the saved file runs to the same bytes.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using cli_test::run_kvcap_split;
using cli_test::temp_path;
using nlohmann::json;

namespace {

const std::string kQuick = "--model meta-llama/Llama-3.1-8B-Instruct --gpu h100 --max-model-len 8192";

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Row {
  double arrival = 0;
  long prompt = 0, output = 0;
};

std::vector<Row> rows(const std::string& csv) {
  std::vector<Row> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // id,class,priority,replica,outcome,reason,arrival_s,prompt_tokens,output_tokens,...
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    out.push_back({std::stod(f[6]), std::stol(f[7]), std::stol(f[8])});
  }
  return out;
}

}  // namespace

TEST_CASE("run without a scenario file: fixed lengths, the request count, a Poisson rate; the saved scenario runs the same") {
  const std::string saved = temp_path("quick", "scenario.json");
  const auto r = run_kvcap_split("run " + kQuick + " --isl 1000 --osl 100 --num-prompts 400 --request-rate 8 --json "
                                                   "--save-scenario " + saved,
                                 "quick-run", true);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto rs = rows(r.files.at("requests.csv"));
  REQUIRE(rs.size() == 400);
  double last = 0;
  for (const auto& x : rs) {
    CHECK(x.prompt == 1000);
    CHECK(x.output == 100);
    last = std::max(last, x.arrival);
  }
  // 399 Poisson gaps at 8/s: the span is 399/8 = 49.9 s, give or take 4 standard deviations
  // (sqrt(399)/8 = 2.5 s).
  CHECK(std::fabs(last - 399.0 / 8) < 10);
  const json res = json::parse(r.out);
  CHECK(res["scenario"]["model"] == "llama-3.1-8b");
  CHECK(res["scenario"]["gpu"] == "h100-sxm");
  CHECK(res["scenario"]["max_model_len"] == 8192);
  // The saved file is an ordinary scenario: running it gives the same results, byte for byte.
  const json doc = json::parse(slurp(saved));
  CHECK(doc["name"] == "quick");
  CHECK(slurp(saved).starts_with("{\n  \"name\": \"quick\",\n  \"description\""));  // the documented key order
  CHECK(doc["engine"]["max_model_len"] == 8192);
  const auto again = run_kvcap_split("run " + saved + " --json", "quick-again", false);
  REQUIRE_MESSAGE(again.code == 0, again.err);
  json a = json::parse(again.out), b = res;
  CHECK(a["requests"] == b["requests"]);
  CHECK(a["latency_s"] == b["latency_s"]);
  CHECK(a["kv"] == b["kv"]);
  std::remove(saved.c_str());
}

TEST_CASE("no rate is vLLM's inf: every request at once; --max-concurrency is a closed loop") {
  const auto all = run_kvcap_split("run " + kQuick + " --isl 200 --osl 20 --num-prompts 50", "quick-inf", true);
  REQUIRE_MESSAGE(all.code == 0, all.err);
  for (const auto& x : rows(all.files.at("requests.csv"))) CHECK(x.arrival == 0);
  const auto cl = run_kvcap_split("run " + kQuick + " --isl 200 --osl 20 --num-prompts 50 --max-concurrency 5 --json",
                                  "quick-cl", true);
  REQUIRE_MESSAGE(cl.code == 0, cl.err);
  CHECK(json::parse(cl.out)["running"]["max"].get<int>() <= 5);
  CHECK(rows(cl.files.at("requests.csv")).size() == 50);
}

TEST_CASE("datasets: ShareGPT lengths at a rate, Azure at its own times") {
  const auto sg = run_kvcap_split("run " + kQuick + " --dataset sharegpt --request-rate 4 --num-prompts 100", "quick-sg", true);
  REQUIRE_MESSAGE(sg.code == 0, sg.err);
  const auto srows = rows(sg.files.at("requests.csv"));
  CHECK(srows.size() == 100);
  long lo = 1 << 30, hi = 0;
  for (const auto& x : srows) lo = std::min(lo, x.prompt), hi = std::max(hi, x.prompt);
  CHECK(hi > lo);  // the dataset's lengths, not one fixed length
  const auto az = run_kvcap_split("run " + kQuick + " --dataset azure-conv --num-prompts 100", "quick-az", true);
  REQUIRE_MESSAGE(az.code == 0, az.err);
  CHECK(rows(az.files.at("requests.csv")).size() == 100);
}

TEST_CASE("search without a scenario file: the SLO from --ttft-p99/--tpot-p99 or vLLM's --goodput") {
  const std::string q = "search " + kQuick + " --isl 1000 --osl 100 --num-prompts 200 --max-probes 6 --seeds 1 --json --quiet";
  const auto a = run_kvcap_split(q + " --ttft-p99 2 --tpot-p99 0.1", "quick-search-a", false);
  REQUIRE_MESSAGE(a.code == 0, a.err);
  const auto b = run_kvcap_split(q + " --goodput ttft:2000 tpot:100", "quick-search-b", false);
  REQUIRE_MESSAGE(b.code == 0, b.err);
  const json ja = json::parse(a.out), jb = json::parse(b.out);
  CHECK(ja["goal"]["ttft_p99_s"] == 2.0);
  CHECK(ja["goal"]["tpot_p99_s"] == 0.1);
  CHECK(ja["probes"] == jb["probes"]);
  CHECK(ja["scenario"]["file"] == "command line");
}

TEST_CASE("quick-mode mistakes are exit 2 naming the flag") {
  struct Bad {
    const char* args;
    const char* names;
  };
  const Bad bad[] = {
      {"run --gpu h100 --isl 10 --osl 10", "--model"},
      {"run --model llama-3.1-8b --isl 10 --osl 10", "--gpu"},
      {"run --model llama-3.1-8b --gpu h100 --osl 10", "--isl"},
      {"run --model llama-3.1-8b --gpu h100 --dataset sharegpt --isl 10 --request-rate 1", "--isl"},
      {"run --model llama-3.1-8b --gpu h100 --dataset sharegpt", "--request-rate"},
      {"run --model llama-3.1-8b --gpu h100 --dataset nope", "--dataset"},
      {"run --model llama-3.1-8b --gpu h100 --isl 10 --osl 10 --request-rate 1 --max-concurrency 2", "--max-concurrency"},
      {"run scenarios/basic-roofline.json --isl 10", "--isl"},
      {"run --model llama-3.1-8b --gpu h100 --isl 10 --osl 10 --goodput ttft=2", "--goodput"},
      {"run --model llama-3.1-8b --gpu h100 --isl 10 --osl 10 --goodput ttft:2 --ttft-p99 1", "--goodput"},
      {"search --model llama-3.1-8b --gpu h100 --isl 10 --osl 10", "/slo"},
      {"run scenarios/basic-roofline.json --ttft-p99 1 --set slo.ttft_p99_s=2", "slo.ttft_p99_s"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.args);
    const auto r = run_kvcap_split(b.args, "quick-bad", false);
    CHECK(r.code == 2);
    CHECK(r.err.find(b.names) != std::string::npos);
  }
}

TEST_CASE("SLO flags on a scenario file are --set slo.* shorthands") {
  const std::string base = "run scenarios/basic-roofline.json --set workload.duration_s=5 --json";
  const auto a = run_kvcap_split(base + " --ttft-p99 0.05", "slo-flag", false);
  const auto b = run_kvcap_split(base + " --set slo.ttft_p99_s=0.05", "slo-set", false);
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  CHECK(json::parse(a.out)["slo_attainment"].get<double>() < 1.0);  // tighter than the file's 2 s
}
