// Roofline pricing checked against step times worked by hand for tests/kernels/synthetic_model.hpp.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "sim/cost/roofline_cost_model.hpp"
#include "tests/kernels/synthetic_model.hpp"

using namespace kvcap;

namespace {

RooflineEfficiency half_efficiency() {
  RooflineEfficiency e;
  e.compute = 0.5;
  e.memory = 0.5;
  e.kv_dequant_overhead = 0;
  e.interconnect = 1;
  e.step_overhead_s = 0;
  return e;
}

RooflineCostModel tiny_roofline(int64_t tp = 1, RooflineEfficiency e = half_efficiency(),
                                MemoryBudget b = test::tiny_budget()) {
  auto shape = make_cost_shape(test::tiny_model(), test::tiny_params(), b, tp);
  return RooflineCostModel(shape, roofline_coefficients(test::toy_gpu(), e, b.kv_dtype, false), "tiny");
}

double brute_causal_keys(int64_t t, int64_t c, int64_t w) {
  double s = 0;
  for (int64_t p = c + 1; p <= c + t; ++p) s += static_cast<double>(w > 0 && p > w ? w : p);
  return s;
}

}  // namespace

TEST_CASE("causal_keys: closed form equals the per-query sum") {
  // Worked: 10 queries after 6 cached tokens, window 8 -> positions 7..16 see 7,8,8,...: 7 + 9×8 = 79.
  CHECK(causal_keys(10, 6, 8) == doctest::Approx(79));
  // Unwindowed: 10 × (6 + 11/2) = 115 (the tokens × (context_before + (tokens+1)/2)).
  CHECK(causal_keys(10, 6, 0) == doctest::Approx(115));
  CHECK(causal_keys(5, 100, 8) == doctest::Approx(40));
  CHECK(causal_keys(0, 100, 8) == 0);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    int64_t t = static_cast<int64_t>(rng() % 300), c = static_cast<int64_t>(rng() % 300),
            w = static_cast<int64_t>(rng() % 200);
    CHECK(causal_keys(t, c, w) == doctest::Approx(brute_causal_keys(t, c, w)));
  }
}

TEST_CASE("tiny model shape: per-GPU parameter and byte reductions") {
  auto s = make_cost_shape(test::tiny_model(), test::tiny_params(), test::tiny_budget(), 1);
  CHECK(s.body_matmul_params_per_gpu == 73728);   // 24576 attention + 49152 MLP
  CHECK(s.lm_head_params_per_gpu == 6400);
  CHECK(s.fixed_weight_bytes_per_gpu == doctest::Approx((86848 - 6400) * 2.0));  // untied embedding not read
  CHECK(s.kv_bytes_per_token_per_layer_per_gpu == 128);
  // per layer: 4×64 + (4+2×2)×16 + 4×16 + 3×128 = 832 elements; ×2 (write+read) ×2 B ×2 layers
  CHECK(s.activation_bytes_per_token == 6656);
  REQUIRE(s.attention_groups.size() == 1);
  CHECK(s.attention_groups[0].layers == 2);
  CHECK(s.attention_groups[0].decode_flops_per_key == 256);  // 2 × 4 heads × (16 + 16)
}

TEST_CASE("roofline: decode-only step is memory bound - worked by hand") {
  auto m = tiny_roofline();
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  StepBreakdown b;
  StepCost c = price_step(m.shape(), m.coefficients(), step, &b);
  // linear: FLOPs 2×73728×4 + 2×6400×4 = 641024 -> 641024 / 5e9 = 1.282e-4 s
  //         bytes 160896 weights + 4 × 6656 activations = 187520 -> / 5e8 = 3.7504e-4 s (wins)
  CHECK(b.linear_s == doctest::Approx(3.7504e-4));
  // decode attention: FLOPs 2 layers × 256 × 1000 = 512000 -> 1.024e-4 s;
  //   KV read 2 × 128 × 1000 = 256000 B, write 2 × 128 × 4 = 1024 B -> 257024 / 5e8 = 5.14048e-4 s
  CHECK(b.decode_attention_s == doctest::Approx(5.14048e-4));
  CHECK(b.prefill_attention_s == 0);
  CHECK(b.allreduce_s == 0);
  CHECK(c.time_s == doctest::Approx(8.89088e-4));
  CHECK(c.flops == doctest::Approx(1153024));
  CHECK(c.hbm_bytes == doctest::Approx(444544));
  // Both phases memory bound at efficiency 0.5: bandwidth utilization is exactly 0.5.
  CHECK(c.bandwidth_utilization == doctest::Approx(0.5));
  // bf16 weights run at the bf16 peak (1e10), not the fp8 one
  CHECK(c.compute_utilization == doctest::Approx(1153024 / (8.89088e-4 * 1e10)));
}

TEST_CASE("roofline: prefill chunk with cached context") {
  auto m = tiny_roofline();
  PrefillChunk chunk{10, 6};
  StepComposition step;
  step.prefills = std::span<const PrefillChunk>(&chunk, 1);
  StepBreakdown b;
  StepCost c = price_step(m.shape(), m.coefficients(), step, &b);
  // linear: FLOPs 2×73728×10 + 2×6400×1 (one logits row) = 1487360 -> 2.97472e-4 s;
  //         bytes 160896 + 10 × 6656 = 227456 -> 4.54912e-4 s (wins)
  CHECK(b.linear_s == doctest::Approx(4.54912e-4));
  // attention: keys 115, FLOPs 2 × 256 × 115 = 58880 -> 1.1776e-5 s;
  //   bytes 2 layers × 128 × (16 read + 10 written) = 6656 -> 1.3312e-5 s (wins)
  CHECK(b.prefill_attention_s == doctest::Approx(1.3312e-5));
  CHECK(c.time_s == doctest::Approx(4.68224e-4));
}

TEST_CASE("roofline: long prefill is compute bound") {
  auto m = tiny_roofline();
  PrefillChunk chunk{2048, 0};
  StepComposition step;
  step.prefills = std::span<const PrefillChunk>(&chunk, 1);
  StepBreakdown b;
  StepCost c = price_step(m.shape(), m.coefficients(), step, &b);
  // linear FLOPs 2×73728×2048 + 12800 = 302002688 -> / 5e9 = 0.0604005376 s
  // (bytes 160896 + 2048×6656 = 13792384 -> 0.027584768 s, loses)
  CHECK(b.linear_s == doctest::Approx(0.0604005376));
  // attention keys 2048 × 2049/2 = 2098176; FLOPs 2 × 256 × keys = 1074266112 -> 0.2148532224 s
  CHECK(b.prefill_attention_s == doctest::Approx(0.2148532224));
  CHECK(c.compute_utilization == doctest::Approx(0.5));  // both phases compute bound at eff 0.5
}

TEST_CASE("roofline: TP all-reduce follows the ring formula") {
  // The memory budget splits KV heads and weights over the 2 ranks: 128 B of KV per token per GPU.
  MemoryBudget b2 = test::tiny_budget();
  b2.kv_bytes_per_token_per_gpu = 128;
  b2.weight_bytes_per_gpu = b2.weight_bytes / 2;
  auto m = tiny_roofline(2, half_efficiency(), b2);
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  StepBreakdown b;
  price_step(m.shape(), m.coefficients(), step, &b);
  // per all-reduce: 2 (TP−1)/TP × 4 tokens × 64 hidden × 2 B = 512 B; 2 per layer × 2 layers
  // + 1 after the vocab-parallel embedding = 5 × 512 = 2560 B over 1e8 B/s = 2.56e-5 s
  CHECK(b.allreduce_s == doctest::Approx(2.56e-5));
  // KV halves per GPU: decode attention reads 2 × 64 × 1000 = 128000 B, writes 512 B at 5e8 B/s
  CHECK(b.decode_attention_s == doctest::Approx(128512 / 5e8));
  // query heads halve too: 2 heads × 2 × 32 = 128 FLOPs per key per layer
  CHECK(m.shape().attention_groups[0].decode_flops_per_key == 128);
}

TEST_CASE("roofline: quantized KV pays the dequantization overhead on reads only") {
  auto e = half_efficiency();
  e.kv_dequant_overhead = 0.25;
  auto m = tiny_roofline(1, e, test::tiny_budget(DType::int8, 128));  // int8 KV, scales ignored here
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  StepBreakdown b;
  price_step(m.shape(), m.coefficients(), step, &b);
  // KV per layer 64 B/token: read 2×64×1000 = 128000 B at 5e8/1.25 = 4e8 B/s -> 3.2e-4 s;
  // write 2×64×4 = 512 B at 5e8 -> 1.024e-6 s. FLOPs side 1.024e-4 s loses.
  CHECK(b.decode_attention_s == doctest::Approx(3.2e-4 + 1.024e-6));
}

TEST_CASE("roofline: sliding-window layers read at most the window") {
  ModelSpec model = test::tiny_model();
  model.layers[1].attention = AttentionKind::sliding_window;
  model.layers[1].sliding_window = 100;
  auto shape = make_cost_shape(model, test::tiny_params(), test::tiny_budget(), 1);
  REQUIRE(shape.attention_groups.size() == 2);
  auto coeff = roofline_coefficients(test::toy_gpu(), half_efficiency(), DType::bf16, false);
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  StepBreakdown b;
  price_step(shape, coeff, step, &b);
  // full layer reads 1000 tokens, windowed layer min(1000, 4×100) = 400: (1000 + 400) × 128 B
  // + writes 2 × 128 × 4 = 1024 B -> 180224 B / 5e8
  CHECK(b.decode_attention_s == doctest::Approx(180224 / 5e8));
}

TEST_CASE("roofline: MoE reads only the experts the batch touches") {
  // routed experts: 2 layers × 8 × 3 × 64 × 32 = 98304 params replace the 49152 dense MLP params
  const test::TinyMoe t = test::tiny_moe();
  auto shape = make_cost_shape(t.model, t.params, t.budget, 1);
  CHECK(shape.routed_expert_bytes_per_gpu == doctest::Approx(2 * 98304.0));
  CHECK(shape.body_matmul_params_per_gpu == doctest::Approx(24576 + 24576));
  auto coeff = roofline_coefficients(test::toy_gpu(), half_efficiency(), DType::bf16, false);
  StepComposition one;
  one.decode_requests = 1;
  StepBreakdown b1;
  price_step(shape, coeff, one, &b1);
  // one token picks 2 of 8 experts: expected touched 8 × (1 − (6/8)^1) = 2 -> a quarter of routed bytes.
  // bytes: fixed (total − routed − embedding) × 2 = (136000 − 98304 − 6400) × 2 = 62592
  //        + 196608 / 4 = 49152, + activations (mlp width 2×32 = 64) per layer 4×64 + 192 + 64 + 192 = 704
  //        elems × 2 × 2 B × 2 layers = 5632 -> total 117376 B / 5e8
  CHECK(b1.linear_s == doctest::Approx(117376 / 5e8));
}

TEST_CASE("roofline: empty step costs nothing - swap adds host-link time") {
  auto m = tiny_roofline();
  StepComposition empty;
  CHECK(m.price(empty).time_s == 0);
  StepComposition swap_only;
  swap_only.swap_bytes = 1'000'000;
  CHECK(m.price(swap_only).time_s == doctest::Approx(1e6 / 1e8));
  CHECK_FALSE(m.measured());
}

TEST_CASE("roofline shape: MLA decode attends over the latent - prefill over expanded heads") {
  ModelSpec model = test::tiny_model();
  for (auto& l : model.layers) l.attention = AttentionKind::mla;
  model.mla.kv_lora_rank = 32;
  model.mla.qk_rope_head_dim = 8;
  model.mla.qk_nope_head_dim = 16;
  model.mla.v_head_dim = 16;
  auto s = make_cost_shape(model, test::tiny_params(), test::tiny_budget(), 1);
  REQUIRE(s.attention_groups.size() == 1);
  // decode: 2 × 4 heads × (QKᵀ over 32 + 8, PV over 32) = 8 × 72 = 576
  CHECK(s.attention_groups[0].decode_flops_per_key == 576);
  // prefill: 2 × 4 heads × ((16 + 8) + 16) = 320
  CHECK(s.attention_groups[0].prefill_flops_per_key == 320);
}
