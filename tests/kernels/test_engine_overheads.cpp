// Engine terms on top of the kernels (sim/cost/engine_overheads.hpp), worked by hand on the tiny
// model of tests/kernels/synthetic_model.hpp with the half-efficiency roofline (1e9 B/s × 0.5,
// 1e10 FLOP/s × 0.5), whose kernel-only step times test_roofline_cost_model.cpp works out.
#include <doctest/doctest.h>

#include "sim/cost/engine_profile.hpp"
#include "sim/cost/roofline_cost_model.hpp"
#include "sim/util/error.hpp"
#include "tests/kernels/synthetic_model.hpp"

using namespace kvcap;

namespace {

RooflineEfficiency half() {
  RooflineEfficiency e;
  e.compute = e.memory = 0.5;
  e.kv_dequant_overhead = 0;
  return e;
}

struct Tiny {
  ModelCostShape shape = make_cost_shape(test::tiny_model(), test::tiny_params(), test::tiny_budget(), 1);
  CostCoefficients coeff = roofline_coefficients(test::toy_gpu(), half(), DType::bf16, false);
};

EngineOverheads terms() {
  EngineOverheads e;
  e.step_fixed_s = 1e-3;
  e.per_sequence_s = 1e-4;
  e.per_token_s = 1e-5;
  e.attention_seq_layer_s = 1e-6;
  e.eager_layer_s = 5e-5;
  e.piecewise_layer_s = 2e-5;
  e.graphs = {true, 16};
  return e;
}

}  // namespace

TEST_CASE("CUDA graph capture sizes follow vLLM's default rule") {
  // max_num_seqs 128: min(2 × 128, 512) = 256, under max_num_batched_tokens 2048.
  const auto g = CudaGraphSizes::vllm_default(128, 2048, false);
  CHECK(g.enabled);
  CHECK(g.max_tokens == 256);
  CHECK(g.padded(1) == 1);
  CHECK(g.padded(2) == 2);
  CHECK(g.padded(3) == 4);
  CHECK(g.padded(5) == 8);
  CHECK(g.padded(9) == 16);
  CHECK(g.padded(248) == 248);
  CHECK(g.padded(249) == 256);
  CHECK(g.padded(256) == 256);
  CHECK(g.padded(257) == 0);  // larger batches run eagerly
  // The default cap 512 keeps the 16-step part of the grid: 257 -> 272, 512 on the grid.
  const auto big = CudaGraphSizes::vllm_default(1024, 8192, false);
  CHECK(big.max_tokens == 512);
  CHECK(big.padded(257) == 272);
  CHECK(big.padded(500) == 512);
  // 2 × 100 = 200 (on the 8-grid); a token budget of 100 caps it at 96, the grid value below.
  CHECK(CudaGraphSizes::vllm_default(100, 8192, false).max_tokens == 200);
  CHECK(CudaGraphSizes::vllm_default(100, 100, false).max_tokens == 96);
  CHECK(CudaGraphSizes::vllm_default(100, 8192, false, 300).max_tokens == 288);  // --max-cudagraph-capture-size
  CHECK_FALSE(CudaGraphSizes::vllm_default(128, 2048, true).enabled);           // --enforce-eager
  CHECK(CudaGraphSizes::vllm_default(128, 2048, true).padded(4) == 0);
}

TEST_CASE("engine terms: a decode batch in a full CUDA graph pays CPU and per-sequence attention, no launches") {
  Tiny t;
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  StepBreakdown b;
  const StepCost c = price_step(t.shape, t.coeff, terms(), step, &b);
  // kernels alone: 8.89088e-4 s (test_roofline_cost_model.cpp). 4 tokens is a captured size.
  CHECK(b.graph_mode == 2);
  CHECK(b.launch_s == 0);
  // cpu 1e-3 + 4 × 1e-4 + 4 × 1e-5 = 1.44e-3; attention 2 layers × 4 sequences × 1e-6 = 8e-6
  CHECK(b.cpu_s == doctest::Approx(1.44e-3));
  CHECK(b.attention_seq_s == doctest::Approx(8e-6));
  CHECK(c.time_s == doctest::Approx(8.89088e-4 + 1.44e-3 + 8e-6));
  CHECK(c.engine.cpu_s == doctest::Approx(1.44e-3));
  CHECK(c.engine.padded_tokens == 0);
  // Without engine terms the price is the kernels' alone.
  CHECK(price_step(t.shape, t.coeff, EngineOverheads{}, step).time_s == doctest::Approx(8.89088e-4));
}

TEST_CASE("engine terms: graph padding charges the GEMMs for the padded tokens") {
  Tiny t;
  StepComposition step;
  step.decode_requests = 3;  // padded to 4
  step.decode_context_tokens = 900;
  StepBreakdown b;
  const StepCost c = price_step(t.shape, t.coeff, terms(), step, &b);
  // linear is memory bound: weights 160896 + 4 × 6656 activations = 187520 B / 5e8 = 3.7504e-4 s;
  // unpadded it would be 160896 + 3 × 6656 = 180864 B -> 3.61728e-4: padding costs 1.3312e-5 s.
  CHECK(b.padded_tokens == 4);
  CHECK(b.linear_s == doctest::Approx(3.7504e-4));
  CHECK(c.engine.padded_tokens == 1);
  CHECK(c.engine.padding_s == doctest::Approx(1.3312e-5));
}

TEST_CASE("engine terms: mixed batches run piecewise graphs, batches above the largest size run eagerly") {
  Tiny t;
  PrefillChunk chunk{10, 6};
  StepComposition mixed;
  mixed.prefills = std::span<const PrefillChunk>(&chunk, 1);
  mixed.decode_requests = 4;
  mixed.decode_context_tokens = 1000;
  StepBreakdown b;
  price_step(t.shape, t.coeff, terms(), mixed, &b);
  CHECK(b.graph_mode == 1);           // 14 tokens, captured size 16
  CHECK(b.padded_tokens == 16);
  CHECK(b.launch_s == doctest::Approx(2 * 2e-5));  // 2 layers × piecewise_layer_s
  // 5 sequences, 14 tokens: cpu 1e-3 + 5e-4 + 1.4e-4
  CHECK(b.cpu_s == doctest::Approx(1.64e-3));
  PrefillChunk big{40, 0};
  StepComposition eager;
  eager.prefills = std::span<const PrefillChunk>(&big, 1);
  price_step(t.shape, t.coeff, terms(), eager, &b);
  CHECK(b.graph_mode == 0);
  CHECK(b.padded_tokens == 40);
  CHECK(b.launch_s == doctest::Approx(2 * 5e-5));  // 2 layers × eager_layer_s
}

TEST_CASE("engine terms: every TP collective pays the link's per-call latency and its bandwidth fraction") {
  MemoryBudget b2 = test::tiny_budget();
  b2.kv_bytes_per_token_per_gpu = 128;
  b2.weight_bytes_per_gpu = b2.weight_bytes / 2;
  const auto shape = make_cost_shape(test::tiny_model(), test::tiny_params(), b2, 2);
  const auto coeff = roofline_coefficients(test::toy_gpu(), half(), DType::bf16, false);
  EngineOverheads e;
  e.allreduce_latency_s = 1e-5;
  e.allreduce_bandwidth_fraction = 0.5;
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  StepBreakdown b;
  price_step(shape, coeff, e, step, &b);
  // 2 per layer × 2 layers + the embedding's + the logits gather = 6 calls × 1e-5 s; bytes:
  // 5 all-reduces × 512 B at half of 1e8 B/s = 5.12e-5 s.
  CHECK(b.allreduce_latency_s == doctest::Approx(6e-5));
  CHECK(b.allreduce_s == doctest::Approx(6e-5 + 5.12e-5));
}

TEST_CASE("engine terms: GEMM efficiency falls at small M, expert GEMMs by tokens per expert") {
  Tiny t;
  PrefillChunk chunk{2048, 0};
  StepComposition step;
  step.prefills = std::span<const PrefillChunk>(&chunk, 1);
  EngineOverheads e;
  e.gemm_half_tokens = 2048;  // at M = 2048 the GEMMs run at half their large-M rate
  StepBreakdown b;
  price_step(t.shape, t.coeff, e, step, &b);
  // kernels alone 302002688 FLOPs / 5e9 = 0.0604005376 s, now / (5e9 × 0.5)
  CHECK(b.linear_s == doctest::Approx(0.1208010752));

  // MoE tiny model: 8 experts, top 2, 2 MoE layers.
  const test::TinyMoe tm = test::tiny_moe();
  const auto moe = make_cost_shape(tm.model, tm.params, tm.budget, 1);
  CHECK(moe.moe_layers == 2);
  CHECK(moe.expert_matmul_params_per_gpu == doctest::Approx(24576));  // 2 layers × 2 experts × 3 × 64 × 32
  PrefillChunk c4{4096, 0};
  StepComposition s4;
  s4.prefills = std::span<const PrefillChunk>(&c4, 1);
  EngineOverheads m;
  m.gemm_half_tokens = 1024;
  m.moe_layer_s = 3e-5;
  price_step(moe, t.coeff, m, s4, &b);
  // 4096 tokens touch all 8 experts: 4096 × 2 / 8 = 1024 rows per expert (efficiency 0.5); the
  // dense GEMMs run at 4096 / 5120 = 0.8. Dense FLOPs 2 × 24576 × 4096 + 2 × 6400 = 201339392
  // -> / 4e9 = 0.050334848 s; expert FLOPs 2 × 24576 × 4096 = 201326592 -> / 2.5e9 = 0.0805306368 s.
  // Bytes (~23.3 MB -> 0.047 s) lose.
  CHECK(b.linear_s == doctest::Approx(0.050334848 + 0.0805306368));
  CHECK(b.moe_routing_s == doctest::Approx(6e-5));  // 2 MoE layers × 3e-5
}

TEST_CASE("engine profile JSON: round trip, strict reading, link latency fallback") {
  EngineProfile p;
  p.name = "vllm-0.15-toy";
  p.engine_version = "0.15.1";
  p.gpu = "toy";
  p.overheads = terms();
  p.allreduce_latency_s = {{"nvlink", 1.2e-5}};
  p.allreduce_rank_latency_s = {{"nvlink", 3e-6}};
  p.allreduce_bandwidth_fraction = {{"nvlink", 0.4}};
  p.allreduce_links_measured = {"nvlink"};
  p.front_end = {4e-3, 1e-6};
  p.provenance = {{"runs", 20}};
  const EngineProfile q = engine_profile_from_json(engine_profile_to_json(p), "p.json");
  CHECK(q.name == p.name);
  CHECK(q.overheads.step_fixed_s == p.overheads.step_fixed_s);
  CHECK(q.overheads.attention_seq_layer_s == p.overheads.attention_seq_layer_s);
  CHECK(q.front_end.per_prompt_token_s == p.front_end.per_prompt_token_s);
  CHECK(engine_profile_to_json(q) == engine_profile_to_json(p));
  bool measured = false;
  CHECK(q.allreduce_latency_for("nvlink", 2, &measured) == 1.2e-5);
  CHECK(measured);
  // Each rank beyond 2 adds its latency: TP 8 = 1.2e-5 + 6 × 3e-6.
  CHECK(q.allreduce_latency_for("nvlink", 8) == doctest::Approx(3e-5));
  CHECK(q.allreduce_bandwidth_fraction_for("nvlink") == 0.4);
  // An unprofiled link takes the most pessimistic figures known, and says it was not measured.
  CHECK(q.allreduce_latency_for("pcie", 2, &measured) == 1.2e-5);
  CHECK_FALSE(measured);
  CHECK(q.allreduce_bandwidth_fraction_for("pcie") == 0.4);
  CHECK(EngineProfile{}.allreduce_bandwidth_fraction_for("pcie") == 1.0);
  CHECK(q.describe().find("fitted to 20 measured runs on toy") != std::string::npos);

  auto bad = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = engine_profile_to_json(p);
    nlohmann::json* node = &j;
    std::string k = key;
    const auto slash = k.find('/');
    if (slash != std::string::npos) {
      node = &j[k.substr(0, slash)];
      k = k.substr(slash + 1);
    }
    (*node)[k] = v;
    return engine_profile_from_json(j, "p.json");
  };
  CHECK_THROWS_WITH_AS(bad("terms/step_fixed_s", -1), doctest::Contains("/terms/step_fixed_s"), InputError);
  CHECK_THROWS_WITH_AS(bad("terms/per_sequence_s", 5), doctest::Contains("per_sequence_s"), InputError);
  CHECK_THROWS_WITH_AS(bad("terms/magic_s", 1), doctest::Contains("magic_s"), InputError);
  CHECK_THROWS_WITH_AS(bad("kind", "kvcap-profile"), doctest::Contains("kvcap-engine-profile"), InputError);
  CHECK_THROWS_WITH_AS(bad("front_end/per_request_s", "fast"), doctest::Contains("per_request_s"), InputError);
  CHECK_THROWS_WITH_AS(load_engine_profile("no-such-profile", "cost_model.engine_profile"),
                       doctest::Contains("no shipped engine profile named 'no-such-profile'"), InputError);
}
