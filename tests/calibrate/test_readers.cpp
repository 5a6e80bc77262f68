// Readers of measured serving runs (sim/calibrate): the per-run JSONL table and
// `vllm bench serve --save-result --save-detailed` result files, and scenario_for().
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/calibrate/bench_serve_result.hpp"
#include "sim/calibrate/serving_run.hpp"
#include "sim/calibrate/serving_run_table.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/error.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload_spec.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using TempDir = test_support::TempDir;

/// Message of the exception f throws; fails the test when it throws none or not an InputError.
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const kvcap::InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected an InputError, got: " << e.what());
  }
  FAIL("expected an InputError, nothing was thrown");
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- the serving-run table ----

// Row 1: shaped like the shared data set's Llama-2-7B rows (vLLM's logged block count present).
const char* const kRowA =
    R"({"id": "exp-a/s0", "experiment": "exp-a", "stage": 0, "sources": [{"repo": "x/y"}],)"
    R"j( "engine": "vLLM (fork; campaign image v0.15.1); V1 scheduler; prefix caching on",)j"
    R"j( "harness": "inference-perf, streaming completions, ignore_eos", "hardware": "NVIDIA H100 80GB HBM3 (SXM)",)j"
    R"j( "gpu": "h100-sxm", "num_gpus": 1, "model": "meta-llama/Llama-2-7b-hf", "model_config": "models/llama-2-7b-hf.json",)j"
    R"j( "precision": "bf16/fp16", "tensor_parallel_size": 1, "data_parallel_size": 1, "max_model_len": 4096,)j"
    R"j( "max_num_batched_tokens": 2048, "max_num_seqs": 128, "gpu_memory_utilization": 0.9,)j"
    R"j( "gpu_memory_utilization_note": "not stated", "cpu_offload": true,)j"
    R"j( "workload": {"preset": "codegen", "num_groups": 11, "users_per_group": 4, "system_prompt_len": 100,)j"
    R"j( "question_len": 466, "output_len": 247, "rate_per_s": 5, "duration_s": 600, "prompt_len_measured_mean": 591.63,)j"
    R"j( "arrival": "exponential", "inferred": false},)j"
    R"j( "measured": {"n_success": 3000, "n_fail": 0, "e2e_mean_s": 1.81, "e2e_p50_s": 1.79, "e2e_p90_s": 1.94,)j"
    R"j( "e2e_p99_s": 2.18, "ttft_mean_s": 0.025, "ttft_p50_s": 0.024, "ttft_p90_s": 0.028, "ttft_p99_s": 0.046,)j"
    R"j( "tpot_derived_s": 0.00725, "output_tokens_per_s": 966.0, "requests_per_s": 4.98, "prompt_len_mean": 591.63},)j"
    R"j( "kv_blocks_measured": 7463, "flags": ["cpu_kv_offload_on (manifest)"], "runnable": true, "not_runnable_reason": ""})j";

// Row 2: TP4, no measured block count, no model_config, an overload flag, no version in the text.
const char* const kRowB =
    R"({"id": "exp-b/s1", "engine": "vLLM V1", "harness": "inference-perf, ignore_eos",)"
    R"j( "gpu": "h100-sxm", "num_gpus": 4, "model": "meta-llama/Llama-2-70b-hf",)j"
    R"j( "tensor_parallel_size": 4, "max_model_len": 4096,)j"
    R"j( "max_num_batched_tokens": 8192, "max_num_seqs": 256, "gpu_memory_utilization": 0.95,)j"
    R"j( "workload": {"num_groups": 23, "users_per_group": 1, "system_prompt_len": 0,)j"
    R"j( "question_len": 1000, "output_len": 1448, "rate_per_s": 4.5, "duration_s": 1200, "prompt_len_measured_mean": 1050},)j"
    R"j( "measured": {"n_success": 3200, "n_fail": 1600, "e2e_mean_s": 160.0, "e2e_p50_s": 156.0, "e2e_p90_s": 263.0,)j"
    R"j( "e2e_p99_s": 289.0, "ttft_mean_s": 106.0, "ttft_p50_s": 91.0, "ttft_p90_s": 215.0, "ttft_p99_s": 246.0,)j"
    R"j( "tpot_derived_s": 0.0369, "output_tokens_per_s": 536.9, "requests_per_s": 2.66},)j"
    R"j( "kv_blocks_measured": null,)j"
    R"j( "flags": ["cpu_kv_offload_on", "overload (>10% failed requests, client timeouts)"], "runnable": true})j";

std::string lines(const std::vector<std::string>& rows) {
  std::string out;
  for (const auto& r : rows) out += r + "\n";
  return out;
}

/// Row A with one change applied through a JSON pointer (remove when `value` is discarded).
std::string row_a_with(const std::string& pointer, const json& value) {
  json j = json::parse(kRowA);
  j[json::json_pointer(pointer)] = value;
  return j.dump();
}
std::string row_a_without(const std::string& pointer) {
  json j = json::parse(kRowA);
  const json::json_pointer p(pointer);
  j[p.parent_pointer()].erase(p.back());
  return j.dump();
}

// ---- bench serve results ----

// Four requests, request 2 failed (vLLM writes output_len 0, ttft 0, no gaps and the error text).
// E2E = ttft + sum(itls) per successful request:
//   r0: 0.10 + (0.02 + 0.03 + 0.05) = 0.20 s; TPOT (0.20 - 0.10) / (4 - 1) = 0.0333... s
//   r1: 0.30 + (0.04 + 0.06)        = 0.40 s; TPOT (0.40 - 0.30) / (3 - 1) = 0.05 s
//   r3: 0.20 + 0.40                 = 0.60 s; TPOT (0.60 - 0.20) / (2 - 1) = 0.40 s
json four_request_result() {
  return json::parse(R"({
    "date": "20260301-120000", "backend": "vllm", "model_id": "meta-llama/Llama-2-7b-hf", "num_prompts": 4,
    "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": null,
    "duration": 2.0, "completed": 3, "failed": 1,
    "input_lens": [100, 200, 150, 50],
    "output_lens": [4, 3, 0, 2],
    "ttfts": [0.10, 0.30, 0.0, 0.20],
    "itls": [[0.02, 0.03, 0.05], [0.04, 0.06], [], [0.40]],
    "errors": ["", "", "TimeoutError: read timed out", ""]
  })");
}

json basic_setup() {
  return json::parse(R"({"model": "llama-2-7b", "gpu": "h100-sxm", "engine_version": "v0.11.0",
                         "engine": {"max_num_seqs": 128, "max_num_batched_tokens": 2048, "enable_prefix_caching": false},
                         "seed": 42})");
}

}  // namespace

TEST_CASE("serving-run table: every field of two hand-written rows") {
  TempDir dir("table2");
  const std::string cfg = dir.write("models/llama-2-7b-hf.json", R"({"model_type": "llama"})");
  const std::string path = dir.write("runs.jsonl", lines({kRowA, kRowB}));
  const auto table = kvcap::read_serving_run_table_full(path);
  REQUIRE(table.runs.size() == 2);
  CHECK(table.skipped.empty());

  const kvcap::ServingRun& a = table.runs[0];
  CHECK(a.id == "exp-a/s0");
  CHECK(a.origin == path + ":1");
  CHECK(a.engine == "vllm");
  CHECK(a.engine_version == "0.15.1");
  CHECK(a.model_id == "meta-llama/Llama-2-7b-hf");
  CHECK(a.model_config_path == fs::absolute(cfg).lexically_normal().string());
  CHECK(a.model == a.model_config_path);  // the config exists, so kvcap loads it
  CHECK(a.gpu == "h100-sxm");
  CHECK(a.tensor_parallel_size == 1);
  CHECK(a.engine_settings == json::parse(R"({"max_model_len": 4096, "max_num_batched_tokens": 2048,
      "max_num_seqs": 128, "gpu_memory_utilization": 0.9, "enable_prefix_caching": true, "num_gpu_blocks": 7463,
      "vllm_version": "0.15.1"})"));  // the run's release sizes the replay's pool
  // token_scale = measured mean prompt / (system + question) = 591.63 / (100 + 466) = 591.63 / 566 = 1.0452827
  CHECK(a.workload["kind"] == "shared_prefix");
  CHECK(a.workload["num_groups"] == 11);
  CHECK(a.workload["prompts_per_group"] == 4);
  CHECK(a.workload["system_prompt_tokens"] == 100);
  CHECK(a.workload["question_tokens"] == 466);
  CHECK(a.workload["output_tokens"] == 247);
  CHECK(a.workload["rate_per_s"].get<double>() == 5.0);
  CHECK(a.workload["duration_s"].get<double>() == 600.0);
  CHECK(a.workload["token_scale"].get<double>() == doctest::Approx(1.0452827).epsilon(1e-7));
  CHECK(a.workload.size() == 9);
  CHECK(a.duration_s == 600.0);
  CHECK(a.client_timeout_s == 0.0);
  CHECK(std::isnan(a.measured_duration_s));
  CHECK(a.output_tokens_fixed == 247);
  CHECK(a.prompt_tokens_mean == 591.63);
  CHECK(a.requests_ok == 3000);
  CHECK(a.requests_failed == 0);
  CHECK(a.e2e.mean_s == 1.81);
  CHECK(a.e2e.p50_s == 1.79);
  CHECK(a.e2e.p90_s == 1.94);
  CHECK(a.e2e.p99_s == 2.18);
  CHECK(a.ttft.mean_s == 0.025);
  CHECK(a.ttft.p50_s == 0.024);
  CHECK(a.ttft.p90_s == 0.028);
  CHECK(a.ttft.p99_s == 0.046);
  CHECK(a.tpot_mean_s == 0.00725);
  CHECK(std::isnan(a.itl_mean_s));
  CHECK(a.output_tokens_per_s == 966.0);
  CHECK(a.requests_per_s == 4.98);
  CHECK_FALSE(a.overloaded);
  CHECK(a.overload_reason.empty());
  CHECK(a.flags == std::vector<std::string>{"cpu_kv_offload_on (manifest)"});
  bool blocks_noted = false, offload_noted = false;
  for (const auto& n : a.notes) {
    blocks_noted = blocks_noted || (contains(n, "num_gpu_blocks = 7463") && contains(n, "kv_blocks_measured"));
    offload_noted = offload_noted || contains(n, "CPU KV offload");
  }
  CHECK(blocks_noted);
  CHECK(offload_noted);

  const kvcap::ServingRun& b = table.runs[1];
  CHECK(b.id == "exp-b/s1");
  CHECK(b.origin == path + ":2");
  CHECK(b.engine_version.empty());
  CHECK(b.model == "meta-llama/Llama-2-70b-hf");  // no model_config: the HF id
  CHECK(b.model_config_path.empty());
  CHECK(b.tensor_parallel_size == 4);
  CHECK_FALSE(b.engine_settings.contains("num_gpu_blocks"));
  CHECK(b.engine_settings["gpu_memory_utilization"].get<double>() == 0.95);
  CHECK(b.engine_settings["max_num_seqs"] == 256);
  // token_scale = 1050 / (0 + 1000) = 1.05
  CHECK(b.workload["token_scale"].get<double>() == doctest::Approx(1.05));
  CHECK(b.workload["system_prompt_tokens"] == 0);
  CHECK(b.workload["rate_per_s"].get<double>() == 4.5);
  CHECK(b.requests_ok == 3200);
  CHECK(b.requests_failed == 1600);
  CHECK(b.overloaded);
  CHECK(b.overload_reason == "overload (>10% failed requests, client timeouts)");
  CHECK(b.flags.size() == 2);

  // The runs-only entry point returns the same rows.
  CHECK(kvcap::read_serving_run_table(path).size() == 2);
}

TEST_CASE("serving-run table: a missing model_config file falls back to the HF id with a note") {
  TempDir dir("nocfg");
  const std::string path = dir.write("runs.jsonl", lines({kRowA}));
  const auto runs = kvcap::read_serving_run_table(path);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].model == "meta-llama/Llama-2-7b-hf");
  CHECK(contains(runs[0].model_config_path, "models/llama-2-7b-hf.json"));
  bool noted = false;
  for (const auto& n : runs[0].notes) noted = noted || contains(n, "not found");
  CHECK(noted);
}

TEST_CASE("serving-run table: rows marked runnable false are skipped and reported; blank lines and CRLF pass") {
  TempDir dir("skip");
  const std::string skipped = R"({"id": "exp-c/s0", "runnable": false, "not_runnable_reason": "no workload spec"})";
  const std::string path = dir.write("runs.jsonl", std::string(kRowA) + "\r\n\r\n" + skipped + "\r\n" + kRowB + "\r\n");
  const auto table = kvcap::read_serving_run_table_full(path);
  REQUIRE(table.runs.size() == 2);
  REQUIRE(table.skipped.size() == 1);
  CHECK(table.skipped[0].id == "exp-c/s0");
  CHECK(table.skipped[0].origin == path + ":3");
  CHECK(table.skipped[0].reason == "no workload spec");
  CHECK(table.runs[1].origin == path + ":4");
}

TEST_CASE("serving-run table: bad input names file:line and the field") {
  TempDir dir("bad");
  auto error_for = [&](const std::vector<std::string>& rows) {
    const std::string path = dir.write("runs.jsonl", lines(rows));
    return input_error_of([&] { (void)kvcap::read_serving_run_table(path); });
  };
  std::string msg;

  msg = error_for({kRowB, R"({"id": "x", "gpu": )"});
  CHECK(contains(msg, "runs.jsonl:2: malformed JSON"));

  // A number no double holds, and nesting past the limit (100k levels overflowed the stack).
  msg = error_for({kRowB, R"({"id": "x", "rate": 1e309})"});
  CHECK(contains(msg, "runs.jsonl:2: number out of range"));
  msg = error_for({std::string(100000, '[') + std::string(100000, ']')});
  CHECK(contains(msg, "runs.jsonl:1: JSON nested deeper than 256 levels (at column 257)"));

  msg = error_for({kRowB, R"({"id": "c", "runnable": false})", row_a_without("/measured/e2e_mean_s")});
  CHECK(contains(msg, "runs.jsonl:3: /measured/e2e_mean_s: required field is missing"));

  msg = error_for({row_a_with("/measured/e2e_mean_s", "1.8")});
  CHECK(contains(msg, "runs.jsonl:1: /measured/e2e_mean_s: expected a number"));

  msg = error_for({row_a_with("/workload/rate_per_s", -5)});
  CHECK(contains(msg, "runs.jsonl:1: /workload/rate_per_s: expected a positive number, got -5"));

  msg = error_for({row_a_with("/workload/rate_per_s", 0)});
  CHECK(contains(msg, "/workload/rate_per_s: expected a positive number"));

  msg = error_for({row_a_with("/tensor_parallel_size", 0)});
  CHECK(contains(msg, "runs.jsonl:1: /tensor_parallel_size"));

  msg = error_for({row_a_with("/workload/output_len", 0)});
  CHECK(contains(msg, "/workload/output_len"));

  msg = error_for({row_a_with("/measured/ttft_p90_s", -0.5)});
  CHECK(contains(msg, "/measured/ttft_p90_s: expected a number >= 0"));

  msg = error_for({row_a_with("/measured/e2e_p99_s", 1.0)});  // below p90 1.94
  CHECK(contains(msg, "/measured/e2e_p99_s: p99 1 is below p90 1.94"));

  msg = error_for({row_a_with("/workload/prompt_len_measured_mean", 59163)});  // 100x the spec: a unit slip
  CHECK(contains(msg, "/workload/prompt_len_measured_mean"));

  msg = error_for({row_a_with("/num_gpus", 2)});
  CHECK(contains(msg, "/num_gpus: expected tensor_parallel_size x data_parallel_size = 1, got 2"));

  msg = error_for({row_a_with("/data_parallel_size", 2)});
  CHECK(contains(msg, "/data_parallel_size"));

  msg = error_for({row_a_with("/kv_blocks_measured", "7463")});
  CHECK(contains(msg, "/kv_blocks_measured: expected an integer"));

  msg = error_for({row_a_with("/flags", "overload")});
  CHECK(contains(msg, "/flags: expected an array of strings"));

  msg = error_for({row_a_with("/measured/e2e_mean", 1.0)});  // a misspelt key is not ignored
  CHECK(contains(msg, "/measured/e2e_mean: unknown key"));

  msg = error_for({kRowA, kRowB, kRowA});
  CHECK(contains(msg, "runs.jsonl:3: /id: duplicate id 'exp-a/s0' (first at "));
  CHECK(contains(msg, "runs.jsonl:1)"));

  msg = error_for({R"([1, 2, 3])"});
  CHECK(contains(msg, "runs.jsonl:1: /: expected a JSON object"));

  msg = error_for({});
  CHECK(contains(msg, "runs.jsonl: empty serving-run table"));

  msg = input_error_of([&] { (void)kvcap::read_serving_run_table((dir.path / "nope.jsonl").string()); });
  CHECK(contains(msg, "nope.jsonl: cannot open"));
}

TEST_CASE("bench serve result: four requests, one failed, figures by hand") {
  TempDir dir("bench4");
  const std::string path = dir.write("result.json", four_request_result().dump(2));
  const kvcap::ServingRun run = kvcap::read_bench_serve_result(path, basic_setup(), "setup.json");

  CHECK(run.id == "result");  // file stem
  CHECK(run.origin == path);
  CHECK(run.engine == "vllm");
  CHECK(run.engine_version == "0.11.0");
  CHECK(run.model == "llama-2-7b");
  CHECK(run.model_id == "meta-llama/Llama-2-7b-hf");
  CHECK(run.gpu == "h100-sxm");
  CHECK(run.tensor_parallel_size == 1);
  CHECK(run.engine_settings ==
        json::parse(R"({"max_num_seqs": 128, "max_num_batched_tokens": 2048, "enable_prefix_caching": false,
                        "vllm_version": "0.11.0"})"));  // from engine_version
  CHECK(run.requests_ok == 3);
  CHECK(run.requests_failed == 1);

  // E2E of the successful requests: [0.20, 0.40, 0.60]. numpy linear: h = (n - 1) q = 2q.
  //   mean 0.40; p50: h = 1 -> 0.40; p90: h = 1.8 -> 0.40 + 0.8 * 0.20 = 0.56; p99: h = 1.98 -> 0.596
  CHECK(run.e2e.mean_s == doctest::Approx(0.40));
  CHECK(run.e2e.p50_s == doctest::Approx(0.40));
  CHECK(run.e2e.p90_s == doctest::Approx(0.56));
  CHECK(run.e2e.p99_s == doctest::Approx(0.596));
  // TTFT sorted [0.10, 0.20, 0.30]: mean 0.20, p50 0.20, p90 0.20 + 0.8 * 0.10 = 0.28, p99 0.298
  CHECK(run.ttft.mean_s == doctest::Approx(0.20));
  CHECK(run.ttft.p50_s == doctest::Approx(0.20));
  CHECK(run.ttft.p90_s == doctest::Approx(0.28));
  CHECK(run.ttft.p99_s == doctest::Approx(0.298));
  // TPOT mean = (0.1/3 + 0.05 + 0.40) / 3 = 0.483333 / 3 = 0.161111
  CHECK(run.tpot_mean_s == doctest::Approx(0.1611111));
  // ITL mean over all six gaps: (0.02 + 0.03 + 0.05 + 0.04 + 0.06 + 0.40) / 6 = 0.60 / 6 = 0.10
  CHECK(run.itl_mean_s == doctest::Approx(0.10));
  // throughput over the 2.0 s benchmark: (4 + 3 + 2) / 2 = 4.5 tokens/s, 3 / 2 = 1.5 requests/s
  CHECK(run.output_tokens_per_s == doctest::Approx(4.5));
  CHECK(run.requests_per_s == doctest::Approx(1.5));
  CHECK(run.measured_duration_s == 2.0);
  CHECK(run.prompt_tokens_mean == doctest::Approx(350.0 / 3));
  CHECK(run.output_tokens_fixed == 0);  // 4, 3, 2 differ
  // 1 of 4 failed (25% > 10%): the table's overload rule
  CHECK(run.overloaded);
  CHECK(contains(run.overload_reason, "failed"));

  // Workload: the three successful requests, arrivals regenerated at 2/s; vLLM's rescaling puts
  // the last of the 4 sends at 4 / 2 = 2 s.
  REQUIRE(run.workload["kind"] == "inline");
  const auto& reqs = run.workload["requests"];
  REQUIRE(reqs.size() == 3);
  std::vector<std::string> ids;
  for (const auto& q : reqs) ids.push_back(q["id"]);
  CHECK(ids == std::vector<std::string>{"r0", "r1", "r3"});
  CHECK(reqs[0]["prompt_tokens"] == 100);
  CHECK(reqs[0]["output_tokens"] == 4);
  CHECK(reqs[2]["prompt_tokens"] == 50);
  CHECK(reqs[2]["output_tokens"] == 2);
  CHECK(reqs[2]["arrival_s"].get<double>() == doctest::Approx(2.0));  // r3 is the last of the four
  CHECK(run.duration_s == doctest::Approx(2.0));
  const auto expected = kvcap::regenerate_bench_arrivals(4, 2.0, 1.0, 42);
  CHECK(reqs[0]["arrival_s"].get<double>() == expected[0]);
  CHECK(reqs[1]["arrival_s"].get<double>() == expected[1]);
  bool dropped_noted = false;
  for (const auto& n : run.notes) dropped_noted = dropped_noted || contains(n, "1 failed requests left out");
  CHECK(dropped_noted);

  // Same seed, same arrivals; another seed, other arrivals.
  const auto again = kvcap::read_bench_serve_result(path, basic_setup(), "setup.json");
  CHECK(again.workload == run.workload);
  json other_seed = basic_setup();
  other_seed["seed"] = 43;
  const auto other = kvcap::read_bench_serve_result(path, other_seed, "setup.json");
  CHECK(other.workload["requests"][0]["arrival_s"] != run.workload["requests"][0]["arrival_s"]);

  // The workload is a valid inline workload: the parser accepts it and streams the 3 requests.
  kvcap::WorkloadContext ctx;
  ctx.file = "replay.json";
  auto source = kvcap::parse_workload(run.workload, ctx)();
  kvcap::Request q;
  int count = 0;
  double last = -1;
  while (source->next(q)) {
    CHECK(q.arrival_s >= last);
    last = q.arrival_s;
    ++count;
  }
  CHECK(count == 3);
}

TEST_CASE("bench serve arrivals: reproducible, mean gap 1/rate, gap CV 1/sqrt(burstiness)") {
  const int64_t n = 40000;
  const double rate = 8.0;
  CHECK(kvcap::regenerate_bench_arrivals(n, rate, 1.0, 7) == kvcap::regenerate_bench_arrivals(n, rate, 1.0, 7));
  CHECK(kvcap::regenerate_bench_arrivals(50, rate, 1.0, 7) != kvcap::regenerate_bench_arrivals(50, rate, 1.0, 8));
  for (double burstiness : {1.0, 0.25, 4.0}) {
    CAPTURE(burstiness);
    const auto t = kvcap::regenerate_bench_arrivals(n, rate, burstiness, 11);
    REQUIRE(t.size() == static_cast<size_t>(n));
    CHECK(t.back() == doctest::Approx(n / rate));
    std::vector<double> gaps;
    double prev = 0;
    int64_t backwards = 0;
    for (double x : t) {
      backwards += x < prev ? 1 : 0;
      gaps.push_back(x - prev);
      prev = x;
    }
    CHECK(backwards == 0);
    double mean = 0;
    for (double g : gaps) mean += g;
    mean /= static_cast<double>(gaps.size());
    double var = 0;
    for (double g : gaps) var += (g - mean) * (g - mean);
    var /= static_cast<double>(gaps.size() - 1);
    CHECK(mean == doctest::Approx(1.0 / rate).epsilon(1e-9));
    CHECK(std::sqrt(var) / mean == doctest::Approx(1.0 / std::sqrt(burstiness)).epsilon(0.05));
  }
}

TEST_CASE("bench serve result: recorded start_times and latencies are used when present") {
  TempDir dir("recorded");
  json res = four_request_result();
  res["start_times"] = {1000.5, 1001.0, 1001.25, 1002.0};  // perf_counter seconds
  res["latencies"] = {0.25, 0.40, 0.0, 0.60};             // r0's stream ended 0.05 s after its last token
  const std::string path = dir.write("rec.json", res.dump());
  const auto run = kvcap::read_bench_serve_result(path, basic_setup(), "setup.json");
  const auto& reqs = run.workload["requests"];
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0]["arrival_s"].get<double>() == 0.0);
  CHECK(reqs[1]["arrival_s"].get<double>() == 0.5);
  CHECK(reqs[2]["arrival_s"].get<double>() == 1.5);
  CHECK(run.duration_s == 1.5);
  // E2E [0.25, 0.40, 0.60]: mean 0.416667; TPOT r0 = (0.25 - 0.10) / 3 = 0.05 -> mean (0.05 + 0.05 + 0.40) / 3
  CHECK(run.e2e.mean_s == doctest::Approx(1.25 / 3));
  CHECK(run.e2e.p50_s == doctest::Approx(0.40));
  CHECK(run.tpot_mean_s == doctest::Approx(0.5 / 3));

  // "regenerated" ignores start_times
  json setup = basic_setup();
  setup["arrivals"] = "regenerated";
  const auto regen = kvcap::read_bench_serve_result(path, setup, "setup.json");
  CHECK(regen.workload["requests"][2]["arrival_s"].get<double>() == doctest::Approx(2.0));

  // max_concurrency below the request count: accepted with recorded send times, noted
  res["max_concurrency"] = 2;
  const std::string path2 = dir.write("rec2.json", res.dump());
  const auto mc = kvcap::read_bench_serve_result(path2, basic_setup(), "setup.json");
  bool noted = false;
  for (const auto& n : mc.notes) noted = noted || contains(n, "max_concurrency 2");
  CHECK(noted);
}

TEST_CASE("bench serve result: request_rate inf, max_concurrency, setup fields") {
  TempDir dir("inf");
  json res = four_request_result();
  res["request_rate"] = "inf";
  const std::string path = dir.write("inf.json", res.dump());
  json setup = basic_setup();
  setup["id"] = "custom-id";
  setup["tensor_parallel_size"] = 2;
  setup["client_timeout_s"] = 600;
  const auto run = kvcap::read_bench_serve_result(path, setup, "setup.json");
  CHECK(run.id == "custom-id");
  CHECK(run.tensor_parallel_size == 2);
  CHECK(run.client_timeout_s == 600.0);
  for (const auto& q : run.workload["requests"]) CHECK(q["arrival_s"].get<double>() == 0.0);
  CHECK(run.duration_s == 0.0);

  // max_concurrency with "inf" and no recorded send times: a closed loop, refused for now
  res["max_concurrency"] = 2;
  const std::string path2 = dir.write("conc.json", res.dump());
  std::string msg = input_error_of([&] { (void)kvcap::read_bench_serve_result(path2, basic_setup(), "setup.json"); });
  CHECK(contains(msg, "conc.json: /max_concurrency: max_concurrency runs are not supported yet"));
  // ... unless it cannot bind (at least as many slots as requests)
  res["max_concurrency"] = 4;
  const std::string path3 = dir.write("conc4.json", res.dump());
  CHECK(kvcap::read_bench_serve_result(path3, basic_setup(), "setup.json").requests_ok == 3);

  // engine version in the setup, TP in the engine object, a config path relative to the setup file
  const std::string cfg = dir.write("cfg/model.json", R"({"model_type": "llama"})");
  json s2 = json::parse(R"({"model": "cfg/model.json", "gpu": "h200", "engine": {"tensor_parallel_size": 4}})");
  const auto r2 = kvcap::read_bench_serve_result(path, s2, (dir.path / "setup.json").string());
  CHECK(r2.model == fs::absolute(cfg).lexically_normal().string());
  CHECK(r2.model_config_path == r2.model);
  CHECK(r2.tensor_parallel_size == 4);
  CHECK_FALSE(r2.engine_settings.contains("tensor_parallel_size"));
  CHECK(r2.engine_version.empty());
  CHECK(r2.id == "inf");
}

TEST_CASE("bench serve result: bad input names the file and the field") {
  TempDir dir("benchbad");
  auto error_for = [&](const json& result, const json& setup = basic_setup()) {
    const std::string path = dir.write("result.json", result.dump());
    return input_error_of([&] { (void)kvcap::read_bench_serve_result(path, setup, "setup.json"); });
  };
  json res;
  std::string msg;

  res = four_request_result();
  res["ttfts"] = {0.1, 0.3, 0.0};
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /ttfts: expected 4 numbers (input_lens has 4), got 3"));

  res = four_request_result();
  res.erase("itls");
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /itls: required field is missing"));
  CHECK(contains(msg, "--save-detailed"));

  res = four_request_result();
  for (const char* k : {"input_lens", "output_lens", "ttfts", "itls", "errors"}) res.erase(k);
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /input_lens"));
  CHECK(contains(msg, "--save-detailed"));

  res = four_request_result();
  res["request_rate"] = -2;
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /request_rate: expected a positive number, got -2"));

  res = four_request_result();
  res["request_rate"] = "fast";
  msg = error_for(res);
  CHECK(contains(msg, "/request_rate: expected a number or \"inf\""));

  res = four_request_result();
  res["itls"][1][0] = -0.04;
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /itls/1/0: expected a number of seconds >= 0"));

  res = four_request_result();
  res["input_lens"][3] = 50.5;
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /input_lens/3: expected a whole number"));

  res = four_request_result();
  res["errors"][0] = nullptr;
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /errors/0: expected a string"));

  res = four_request_result();
  res["completed"] = 4;
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /completed: says 4 requests completed"));

  res = four_request_result();
  res.erase("duration");
  msg = error_for(res);
  CHECK(contains(msg, "result.json: /duration: required field is missing"));

  res = four_request_result();
  res["burstiness"] = 0;
  msg = error_for(res);
  CHECK(contains(msg, "/burstiness: expected a positive number"));

  res = four_request_result();
  res["latencies"] = {0.05, 0.4, 0.0, 0.6};  // r0 ends before its first token
  msg = error_for(res);
  CHECK(contains(msg, "/latencies/0: E2E latency 0.05 s is below the TTFT"));

  res = four_request_result();
  res["errors"] = {"e", "e", "e", "e"};
  res["completed"] = 0;
  res["failed"] = 4;
  msg = error_for(res);
  CHECK(contains(msg, "no request succeeded"));

  res = four_request_result();
  res["ramp_up_strategy"] = "linear";
  msg = error_for(res);
  CHECK(contains(msg, "/ramp_up_strategy: ramp-up runs cannot be regenerated"));

  // setup errors name the setup and its field
  json setup = basic_setup();
  setup.erase("gpu");
  msg = error_for(four_request_result(), setup);
  CHECK(contains(msg, "setup.json: /gpu: required field is missing"));

  setup = basic_setup();
  setup["engine"]["max_num_seq"] = 64;
  msg = error_for(four_request_result(), setup);
  CHECK(contains(msg, "setup.json: /engine/max_num_seq: unknown key"));

  setup = basic_setup();
  setup["rate"] = 3;
  msg = error_for(four_request_result(), setup);
  CHECK(contains(msg, "setup.json: /rate: unknown key"));

  setup = basic_setup();
  setup["tensor_parallel_size"] = 2;
  setup["engine"]["tensor_parallel_size"] = 4;
  msg = error_for(four_request_result(), setup);
  CHECK(contains(msg, "setup.json: /engine/tensor_parallel_size: 4 contradicts /tensor_parallel_size 2"));

  setup = basic_setup();
  setup["arrivals"] = "recorded";
  msg = error_for(four_request_result(), setup);
  CHECK(contains(msg, "setup.json: /arrivals: 'recorded' needs the result's start_times"));

  setup = basic_setup();
  setup["model"] = "configs/missing.json";
  msg = error_for(four_request_result(), setup);
  CHECK(contains(msg, "setup.json: /model: no such config file"));

  const std::string broken = dir.write("broken.json", "{\"duration\": 2.0,\n \"completed\": }");
  msg = input_error_of([&] { (void)kvcap::read_bench_serve_result(broken, basic_setup(), "setup.json"); });
  CHECK(contains(msg, "broken.json:2:"));
  CHECK(contains(msg, "malformed JSON"));
}

TEST_CASE("scenario_for: a document parse_scenario accepts, with the run's model, gpu, TP and workload") {
  TempDir dir("scenario");
  dir.write("models/llama-2-7b-hf.json", R"({"model_type": "llama"})");
  const std::string path = dir.write("runs.jsonl", lines({kRowA, kRowB}));
  const auto runs = kvcap::read_serving_run_table(path);
  REQUIRE(runs.size() == 2);
  for (const auto& run : runs) {
    CAPTURE(run.id);
    const json doc = kvcap::scenario_for(run, 17);
    CHECK(doc["model"] == run.model);
    CHECK(doc["gpu"] == run.gpu);
    CHECK(doc["engine"]["tensor_parallel_size"] == run.tensor_parallel_size);
    CHECK(doc["workload"] == run.workload);
    CHECK(doc["seed"] == 17);
    CHECK_FALSE(doc.contains("horizon_s"));
    CHECK_FALSE(doc.contains("cost_model"));
    // parse_scenario does not validate the workload (the shared_prefix kind may be new).
    const kvcap::ScenarioSettings s = kvcap::parse_scenario(doc, (dir.path / "replay.json").string());
    CHECK(s.gpu == run.gpu);
    CHECK(s.engine.tensor_parallel_size == run.tensor_parallel_size);
    CHECK(s.engine.max_num_seqs == run.engine_settings["max_num_seqs"].get<int64_t>());
    CHECK(s.engine.enable_prefix_caching);
    CHECK(s.seed == 17);
    CHECK(std::isinf(s.horizon_s));
  }
  // run A's config path is absolute: the scenario loads it wherever the document is written
  CHECK(kvcap::parse_scenario(kvcap::scenario_for(runs[0], 1), "elsewhere/replay.json").model == runs[0].model);
  CHECK(kvcap::parse_scenario(kvcap::scenario_for(runs[0], 1), "x.json").engine.num_gpu_blocks == 7463);

  // a bench run: the inline workload and the engine object from the setup
  TempDir bdir("scenario-bench");
  const std::string rpath = bdir.write("result.json", four_request_result().dump());
  json setup = basic_setup();
  setup["tensor_parallel_size"] = 2;
  const auto run = kvcap::read_bench_serve_result(rpath, setup, "setup.json");
  const json doc = kvcap::scenario_for(run, 3);
  const kvcap::ScenarioSettings s = kvcap::parse_scenario(doc, "replay.json");
  CHECK(s.model == "llama-2-7b");
  CHECK(s.engine.tensor_parallel_size == 2);
  CHECK(s.engine.max_num_batched_tokens == 2048);
  CHECK_FALSE(s.engine.enable_prefix_caching);
  CHECK(s.workload["kind"] == "inline");
}

TEST_CASE("serving-run table: parse_workload accepts the shared_prefix workloads (once that kind is built)") {
  TempDir dir("workload");
  const std::string path = dir.write("runs.jsonl", lines({kRowA, kRowB}));
  for (const auto& run : kvcap::read_serving_run_table(path)) {
    CAPTURE(run.id);
    kvcap::WorkloadContext ctx;
    ctx.file = "replay.json";
    ctx.max_model_len = run.engine_settings["max_model_len"].get<int64_t>();
    kvcap::SourceFactory factory;
    try {
      factory = kvcap::parse_workload(run.workload, ctx);
    } catch (const kvcap::InputError& e) {
      if (!contains(e.what(), "unknown workload kind")) throw;
      MESSAGE("skipped: this build has no shared_prefix workload kind yet");
      return;
    }
    auto source = factory();
    kvcap::Request q;
    int64_t count = 0, other_output = 0;
    double prompt_sum = 0;
    while (source->next(q)) {
      ++count;
      prompt_sum += static_cast<double>(q.prompt_tokens);
      other_output += q.output_tokens != run.output_tokens_fixed ? 1 : 0;
    }
    CHECK(other_output == 0);
    // inference-perf's constant load: int(rate x duration) requests (A: 5 x 600, B: 4.5 x 1200)
    CHECK(count == static_cast<int64_t>(run.workload["rate_per_s"].get<double>() *
                                        run.workload["duration_s"].get<double>()));
    // token_scale brings the mean prompt to the measured one (A: 105 + 487 = 592 vs 591.63)
    CHECK(prompt_sum / static_cast<double>(count) == doctest::Approx(run.prompt_tokens_mean).epsilon(0.01));
  }
}

TEST_CASE("parse_engine_version") {
  CHECK(kvcap::parse_engine_version("vLLM (fork; campaign image v0.15.1); V1 scheduler") == "0.15.1");
  CHECK(kvcap::parse_engine_version("vllm 0.11.0rc1") == "0.11.0");
  CHECK(kvcap::parse_engine_version("v0.9") == "0.9");
  CHECK(kvcap::parse_engine_version("vLLM V1 scheduler") == "");
  CHECK(kvcap::parse_engine_version("H100 80GB 2.5x") == "");
  CHECK(kvcap::parse_engine_version("") == "");
}

TEST_CASE("shared data: the H100 serving-run table") {
  const std::string path = std::string(KVCAP_SHARED_DIR) + "/calibration/vllm-h100-serving-runs.jsonl";
  if (!fs::exists(path)) {
    MESSAGE("skipped: " << path << " is absent");
    return;
  }
  const auto table = kvcap::read_serving_run_table_full(path);
  CHECK(table.runs.size() == 24);
  CHECK(table.skipped.empty());
  int overloaded = 0;
  for (const auto& run : table.runs) {
    CAPTURE(run.id);
    overloaded += run.overloaded ? 1 : 0;
    CHECK(run.engine_version == "0.15.1");
    CHECK(fs::is_regular_file(run.model));  // every row's config.json is in models/
    CHECK(run.model == run.model_config_path);
    CHECK(run.requests_ok + run.requests_failed ==
          std::llround(run.workload["rate_per_s"].get<double>() * run.workload["duration_s"].get<double>()));
    CHECK(run.workload["token_scale"].get<double>() > 1.0);
    CHECK(run.workload["token_scale"].get<double>() < 1.2);
    CHECK(run.output_tokens_fixed == run.workload["output_tokens"].get<int64_t>());
    // the data set's TPOT is (mean E2E - mean TTFT) / (output - 1)
    CHECK(run.tpot_mean_s == doctest::Approx((run.e2e.mean_s - run.ttft.mean_s) /
                                             static_cast<double>(run.output_tokens_fixed - 1)).epsilon(1e-6));
    const auto s = kvcap::parse_scenario(kvcap::scenario_for(run, 1), "replay.json");
    CHECK(s.engine.tensor_parallel_size == run.tensor_parallel_size);
    try {  // the full workload check, once the shared_prefix kind is built
      kvcap::WorkloadContext ctx;
      ctx.file = "replay.json";
      ctx.max_model_len = s.engine.max_model_len;
      (void)kvcap::parse_workload(run.workload, ctx);
    } catch (const kvcap::InputError& e) {
      if (!contains(e.what(), "unknown workload kind")) throw;
    }
  }
  CHECK(overloaded == 4);
}
