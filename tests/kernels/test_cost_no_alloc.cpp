// CostModel::price runs once per simulated step and must not allocate: count global operator new
// calls while pricing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "sim/cost/roofline_cost_model.hpp"
#include "tests/kernels/synthetic_model.hpp"

namespace {
thread_local bool g_counting = false;
thread_local long g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// GCC sees free() inside a replaced operator delete as a new/free mismatch; here it is the pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

using namespace kvcap;

TEST_CASE("roofline price() performs no heap allocation") {
  ModelSpec model = test::tiny_model();
  model.layers[1].attention = AttentionKind::sliding_window;
  model.layers[1].sliding_window = 64;
  auto shape = make_cost_shape(model, test::tiny_params(), test::tiny_budget(), 2);
  RooflineCostModel m(shape, roofline_coefficients(test::toy_gpu(), RooflineEfficiency{}, DType::bf16, false), "t");
  std::vector<PrefillChunk> chunks{{100, 0}, {37, 512}, {1, 4000}};
  StepComposition step;
  step.prefills = chunks;
  step.decode_requests = 12;
  step.decode_context_tokens = 9000;
  step.swap_bytes = 4096;
  g_allocations = 0;
  g_counting = true;
  double total = 0;
  for (int i = 0; i < 100; ++i) total += m.price(step).time_s;
  g_counting = false;
  CHECK(g_allocations == 0);
  CHECK(total > 0);
}
