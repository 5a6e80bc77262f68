// --format vllm-bench and --percentiles (issue #17 part 4): the keys and units of
// `vllm bench serve --save-result`, checked against a second computation from requests.csv
// (numpy's mean, population std and linear percentiles, written out here), and percentile
// lists that reach every output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/util/text.hpp"
#include "tests/support/run_command.hpp"

using cli_test::run_kvcap_split;
using nlohmann::json;

namespace {

const std::string kRun = "run scenarios/basic-roofline.json --set workload.duration_s=10";

struct Column {
  std::vector<double> v;
  double mean() const {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  }
  double std_dev() const {
    const double m = mean();
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size()));
  }
  double percentile(double p) const {
    std::vector<double> x = v;
    std::sort(x.begin(), x.end());
    const double h = static_cast<double>(x.size() - 1) * p / 100.0;
    const auto lo = static_cast<size_t>(std::floor(h));
    return lo + 1 >= x.size() ? x[lo] : x[lo] + (h - static_cast<double>(lo)) * (x[lo + 1] - x[lo]);
  }
};

/// requests.csv's finished rows: column name -> values.
std::map<std::string, Column> finished_columns(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream hs(line);
  for (std::string f; std::getline(hs, f, ',');) names.push_back(f);
  std::map<std::string, Column> cols;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    f.resize(names.size());
    if (f[4] != "finished") continue;
    for (size_t i = 0; i < names.size(); ++i)
      if (!f[i].empty() && (std::isdigit(static_cast<unsigned char>(f[i][0])) || f[i][0] == '-'))
        cols[names[i]].v.push_back(std::stod(f[i]));
  }
  return cols;
}

}  // namespace

TEST_CASE("--format vllm-bench: vLLM's keys in ms, equal to a second computation from requests.csv") {
  const auto r = run_kvcap_split(kRun + " --format vllm-bench", "vbench", true);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const json b = json::parse(r.out);
  CHECK(json::parse(r.files.at("vllm-bench.json")) == b);  // the --out copy is the same document
  const json res = json::parse(r.files.at("results.json"));
  auto cols = finished_columns(r.files.at("requests.csv"));
  const auto& ttft = cols["ttft_s"];
  REQUIRE(ttft.v.size() > 50);
  CHECK(b["completed"] == ttft.v.size());
  CHECK(b["num_prompts"] == res["requests"]["arrived"]);
  CHECK(b["failed"] == 0);
  double in = 0, out = 0;
  for (double x : cols["prompt_tokens"].v) in += x;
  for (double x : cols["output_tokens"].v) out += x;
  CHECK(b["total_input_tokens"].get<double>() == in);
  CHECK(b["total_output_tokens"].get<double>() == out);
  const double duration = b["duration"].get<double>();
  CHECK(duration == res["duration_s"].get<double>());
  CHECK(b["request_throughput"].get<double>() == doctest::Approx(ttft.v.size() / duration));
  CHECK(b["output_throughput"].get<double>() == doctest::Approx(out / duration));
  CHECK(b["total_token_throughput"].get<double>() == doctest::Approx((in + out) / duration));
  CHECK(b["request_goodput"].get<double>() == doctest::Approx(res["goodput_requests_per_s"].get<double>()));
  // requests.csv rounds to 9 digits: agreement to 1e-7 relative.
  const std::map<std::string, std::string> metric_column{{"ttft", "ttft_s"}, {"tpot", "tpot_s"}, {"e2el", "e2e_s"}};
  for (const auto& entry : metric_column) {
    const auto& metric = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& column = entry.second;
    CAPTURE(metric);
    const Column& c = cols[column];
    CHECK(b["mean_" + metric + "_ms"].get<double>() == doctest::Approx(c.mean() * 1000).epsilon(1e-7));
    CHECK(b["std_" + metric + "_ms"].get<double>() == doctest::Approx(c.std_dev() * 1000).epsilon(1e-6));
    CHECK(b["median_" + metric + "_ms"].get<double>() == doctest::Approx(c.percentile(50) * 1000).epsilon(1e-7));
    for (int p : {50, 90, 95, 99})
      CHECK(b["p" + std::to_string(p) + "_" + metric + "_ms"].get<double>() ==
            doctest::Approx(c.percentile(p) * 1000).epsilon(1e-7));
  }
  // ITL: per step, not per request; the same figures as results.json's, in ms.
  CHECK(b["mean_itl_ms"].get<double>() == doctest::Approx(res["latency_s"]["itl"]["mean"].get<double>() * 1000));
  CHECK(b["p99_itl_ms"].get<double>() == doctest::Approx(res["latency_s"]["itl"]["p99"].get<double>() * 1000));
  CHECK(b["kvcap"]["simulated"] == true);
  CHECK(b["kvcap"]["goodput_ms"]["ttft"] == 2000.0);
}

TEST_CASE("--percentiles reaches results.json, the table and vllm-bench") {
  const auto r = run_kvcap_split(kRun + " --percentiles 50,99.9", "pct", true);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const json res = json::parse(r.files.at("results.json"));
  const auto& t = res["latency_s"]["ttft"];
  CHECK(t.contains("p99.9"));
  CHECK(t.contains("p50"));
  CHECK(!t.contains("p90"));
  CHECK(t.contains("std"));
  CHECK(r.out.find("p99.9") != std::string::npos);
  CHECK(r.out.find(" p90 ") == std::string::npos);
  const json b = json::parse(r.files.at("vllm-bench.json"));
  CHECK(b.contains("p99.9_ttft_ms"));
  CHECK(!b.contains("p99_ttft_ms"));
  auto cols = finished_columns(r.files.at("requests.csv"));
  CHECK(t["p99.9"].get<double>() == doctest::Approx(cols["ttft_s"].percentile(99.9)).epsilon(1e-7));
  // The default is vLLM's usual set plus p95.
  const auto d = run_kvcap_split(kRun + " --json", "pct-default", false);
  const json dj = json::parse(d.out);
  for (const char* k : {"mean", "std", "p50", "p90", "p95", "p99", "max", "count"})
    CHECK(dj["latency_s"]["e2e"].contains(k));
}

TEST_CASE("bad --percentiles and --format are exit 2 naming the flag") {
  for (const char* bad : {"101", "50,,90", "-1", "abc", "50,50", ""}) {
    CAPTURE(bad);
    const auto r = run_kvcap_split(kRun + " --percentiles '" + bad + "'", "pct-bad", false);
    CHECK(r.code == 2);
    CHECK(r.err.find("--percentiles") != std::string::npos);
  }
  const auto f = run_kvcap_split(kRun + " --format yaml", "fmt-bad", false);
  CHECK(f.code == 2);
  CHECK(f.err.find("--format") != std::string::npos);
  const auto two = run_kvcap_split(kRun + " --json --format vllm-bench", "fmt-two", false);
  CHECK(two.code == 2);
}

TEST_CASE("the summary prints plain numbers") {
  const auto r = run_kvcap_split(kRun, "plain", false);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("e+0") == std::string::npos);
  CHECK(r.out.find("e-0") == std::string::npos);
}

TEST_CASE("format_plain: four significant digits, whole numbers past 10^4, never an exponent") {
  CHECK(kvcap::format_plain(28970.4) == "28970");
  CHECK(kvcap::format_plain(2897.04) == "2897");
  CHECK(kvcap::format_plain(0.0047312) == "0.004731");
  CHECK(kvcap::format_plain(0.000000996) == "0.000000996");
  CHECK(kvcap::format_plain(2.5) == "2.5");
  CHECK(kvcap::format_plain(-13.4567) == "-13.46");
  CHECK(kvcap::format_plain(0) == "0");
  CHECK(kvcap::format_plain(1.0 / 0.0) == "-");
  CHECK(kvcap::format_plain(1e12) == "1000000000000");
}
