// Plain-decode steps priced by context alone (DecodeBatchPricing, Replica::bulk_decode's path)
// must equal price_step bit for bit: any drift would change every bulk-decoded run's outputs.
// Shapes cover what changes the pricing: MoE routing, sliding windows, linear-attention state
// groups, TP collectives, CUDA-graph padding (and eager batches above the largest graph).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <random>

#include "sim/cost/roofline_cost_model.hpp"
#include "sim/cost/step_pricing.hpp"

using namespace kvcap;

namespace {

ModelCostShape shape_with(std::mt19937_64& rng, int variant) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  ModelCostShape s;
  s.tensor_parallel_size = variant % 3 == 0 ? 4 : 1;
  s.num_layers = 32;
  s.hidden_size = 4096;
  s.body_matmul_params_per_gpu = 6.5e9 * u(rng);
  s.lm_head_params_per_gpu = 5e8 * u(rng);
  s.fixed_weight_bytes_per_gpu = 2 * s.body_matmul_params_per_gpu;
  s.activation_bytes_per_token = 1e6 * u(rng);
  s.gemm_launches_per_step = 129;
  s.kv_bytes_per_token_per_layer_per_gpu = 4096 * u(rng);
  if (variant % 2 == 1) {  // MoE: 64 experts, 6 a token
    s.num_experts = 64;
    s.experts_per_token = 6;
    s.moe_layers = 30;
    s.expert_matmul_params_per_gpu = 0.6 * s.body_matmul_params_per_gpu;
    s.routed_expert_bytes_per_gpu = 4e10 * u(rng);
  }
  AttentionGroup full;
  full.prefill_flops_per_key = full.decode_flops_per_key = 8192 * u(rng);
  if (variant % 4 == 2) {  // sliding window beside full attention, and a linear-attention group
    AttentionGroup sliding = full;
    sliding.window_tokens = 4096;
    AttentionGroup linear;
    linear.linear = true;
    linear.state_bytes_per_sequence = 2e6 * u(rng);
    linear.flops_per_token = 3e7 * u(rng);
    full.layers = 8, sliding.layers = 16, linear.layers = 8;
    s.attention_groups = {full, sliding, linear};
  } else {
    full.layers = 32;
    s.attention_groups = {full};
  }
  return s;
}

CostCoefficients coefficients(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  CostCoefficients c;
  c.peak_flops = 1e15;
  c.peak_hbm_bytes_per_s = 3.35e12;
  c.linear_flops_per_s = 6e14 * u(rng);
  c.linear_bytes_per_s = 2.5e12 * u(rng);
  c.gemm_launch_s = 4e-6 * u(rng);
  c.attention_flops_per_s = 4e14 * u(rng);
  c.kv_read_bytes_per_s = 2.8e12 * u(rng);
  c.kv_write_bytes_per_s = 1.5e12 * u(rng);
  c.attention_launch_s = 5e-6 * u(rng);
  c.interconnect_bytes_per_s = 4.5e11 * u(rng);
  c.host_link_bytes_per_s = 5e10;
  c.step_overhead_s = 2e-4 * u(rng);
  return c;
}

EngineOverheads engine(std::mt19937_64& rng, int variant) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  EngineOverheads e;
  if (variant % 5 == 4) return e;  // kernels only
  e.step_fixed_s = 1e-3 * u(rng);
  e.per_sequence_s = 1e-5 * u(rng);
  e.per_token_s = 1e-6 * u(rng);
  e.attention_seq_layer_s = 1e-7 * u(rng);
  e.eager_layer_s = 5e-5 * u(rng);
  e.piecewise_layer_s = 2e-5 * u(rng);
  e.moe_layer_s = 1e-5 * u(rng);
  e.gemm_half_tokens = 64 * u(rng);
  e.allreduce_latency_s = 8e-6 * u(rng);
  e.allreduce_bandwidth_fraction = 0.7;
  e.graphs = CudaGraphSizes::vllm_default(256, 8192, false);  // decode batches above 512 run eagerly
  return e;
}

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

}  // namespace

TEST_CASE("decode batch pricing: bit for bit price_step, for every batch size and context") {
  std::mt19937_64 rng(20261204);
  int compared = 0;
  for (int variant = 0; variant < 20; ++variant) {
    const RooflineCostModel model(shape_with(rng, variant), coefficients(rng), "test");
    RooflineCostModel with_engine = model;
    with_engine.set_engine(engine(rng, variant));
    for (const CostModel* m : {static_cast<const CostModel*>(&model), static_cast<const CostModel*>(&with_engine)}) {
      DecodeBatchPricing p;
      for (int64_t n : {1, 2, 3, 7, 64, 255, 256, 511, 513, 1000}) {
        REQUIRE(m->prepare_decode(n, p));
        CHECK(p.decode_requests == n);
        // One full-attention group takes the folded path (its bits are checked below), others not.
        CHECK(p.one_group == (variant % 4 != 2));
        std::uniform_int_distribution<int64_t> ctx(n, n * 140000);
        for (int k = 0; k < 25; ++k) {
          StepComposition step;
          step.decode_requests = n;
          step.decode_context_tokens = k == 0 ? n : ctx(rng);
          const StepCost want = m->price(step);
          const StepCost got = price_decode_batch(p, step.decode_context_tokens);
          INFO("variant ", variant, " n ", n, " context ", step.decode_context_tokens);
          CHECK(same_bits(got.time_s, want.time_s));
          CHECK(same_bits(got.flops, want.flops));
          CHECK(same_bits(got.hbm_bytes, want.hbm_bytes));
          CHECK(same_bits(got.compute_utilization, want.compute_utilization));
          CHECK(same_bits(got.bandwidth_utilization, want.bandwidth_utilization));
          CHECK(same_bits(got.engine.cpu_s, want.engine.cpu_s));
          CHECK(same_bits(got.engine.attention_seq_s, want.engine.attention_seq_s));
          CHECK(same_bits(got.engine.padding_s, want.engine.padding_s));
          CHECK(got.engine.padded_tokens == want.engine.padded_tokens);
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 20 * 2 * 10 * 25);
}

TEST_CASE("decode batch pricing: the context moves the step time (the cached part is not all of it)") {
  std::mt19937_64 rng(7);
  const RooflineCostModel model(shape_with(rng, 0), coefficients(rng), "test");
  DecodeBatchPricing p;
  REQUIRE(model.prepare_decode(8, p));
  // Decode at 8 x 100k tokens of context reads far more KV than at 8 x 1k: a pricer that froze
  // the context it was prepared with would return the same time.
  CHECK(price_decode_batch(p, 800000).time_s > 2 * price_decode_batch(p, 8000).time_s);
}
