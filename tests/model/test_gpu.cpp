// The GPU catalog and GPU JSON files.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "sim/hw/gpu_spec.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

TEST_CASE("the nineteen catalog GPUs, case-insensitive, with sane figures") {
  const char* ids[] = {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200",   "b200",  "l40s",   "l4",  "rtx-4090",
                       "a10",       "rtx-3090",  "rtx-5090", "mi300x",    "a10g",   "gb200", "mi325x", "gb10", "gh200", "rtx-pro-6000"};
  CHECK(gpu_catalog().size() == 23);
  // No public price for these (0 = unknown: sizing reports say "price unknown").
  const std::set<std::string> unpriced = {"gb200", "mi325x", "gb10", "gh200"};
  for (const char* id : ids) {
    CAPTURE(id);
    const GpuSpec g = load_gpu(id);
    CHECK(g.id == id);
    CHECK(g.memory_bytes > (int64_t{20} << 30));
    CHECK(g.hbm_bandwidth_bytes_per_s > 2e11);
    CHECK(g.bf16_flops > 5e13);  // the RTX 3090: 71 TFLOPS
    CHECK((g.price_per_gpu_hour_usd > 0) != (unpriced.count(id) > 0));
    CHECK_NOTHROW(validate_gpu(g, id));
    // What vLLM sees is below the driver's total, where a log shows it.
    CHECK(g.visible_memory_bytes < g.memory_bytes);
    if (g.visible_memory_bytes > 0) CHECK(g.visible_memory_bytes > g.memory_bytes * 9 / 10);
  }
  CHECK(load_gpu("rtx-3090").visible_memory_bytes == static_cast<int64_t>(23.56 * 1024 * 1024 * 1024));
  CHECK(load_gpu("H100-SXM").memory_bytes == int64_t{81559} << 20);  // nvidia-smi 81559MiB
  CHECK(load_gpu("MI300X").memory_bytes == 205822885888);           // rocm-smi bytes
  CHECK(load_gpu("a100-40gb").fp8_flops == 0);                       // no FP8 tensor cores
  CHECK(load_gpu("a100-80gb").visible_memory_bytes == static_cast<int64_t>(79.25 * 1024 * 1024 * 1024));
  CHECK(load_gpu("gb200").memory_bytes == int64_t{189471} << 20);   // nvidia-smi 189471MiB
  CHECK(load_gpu("gh200").visible_memory_bytes == static_cast<int64_t>(94.50 * 1024 * 1024 * 1024));  // CUDA-visible 94.50 GiB
  CHECK(load_gpu("GH200-480GB").memory_bytes == int64_t{97871} << 20);  // nvidia-smi 97871MiB
  CHECK(load_gpu("rtx-pro-6000").visible_memory_bytes == 101974081536);  // torch: 94.97 GiB
  CHECK(load_gpu("gb10").visible_memory_bytes == static_cast<int64_t>(121.69 * 1024 * 1024 * 1024));
  // RTX 5070 Ti: nvidia-smi 16303 MiB (vLLM #34076); seen by torch taken as that minus the RTX
  // 5090's 484 MiB gap (32607 MiB - 31.37 GiB), 15,819 MiB.
  const GpuSpec ti = load_gpu("5070ti");
  CHECK(ti.id == "rtx-5070-ti");
  CHECK(ti.memory_bytes == int64_t{16303} << 20);
  CHECK(ti.visible_memory_bytes == int64_t{15819} << 20);
  CHECK(load_gpu("rtx-5090").memory_bytes - load_gpu("rtx-5090").visible_memory_bytes == 507636614);  // 484.1 MiB
  CHECK(ti.compute_capability == 120);
  // SM counts (the Triton sampler's buffer): the data sheets' figures, 0 where none is recorded.
  CHECK(load_gpu("h100-sxm").sm_count == 132);
  CHECK(load_gpu("a100-40gb").sm_count == 108);
  CHECK(load_gpu("b200").sm_count == 148);
  CHECK(load_gpu("a10g").sm_count == 0);
}

TEST_CASE("an unknown GPU is refused, listing the catalog") {
  const auto e = test::input_error_of([] { load_gpu("h300"); });
  CHECK(test::contains(e, "gpu: "));
  CHECK(test::contains(e, "h100-sxm"));
}

TEST_CASE("a GPU JSON file: a base with overrides, or every figure") {
  auto path = test::write_temp("gpu_base.json", R"({"base": "h100-sxm", "memory_bytes": 85000000000,
      "price_per_gpu_hour_usd": 2.0})");
  GpuSpec g = load_gpu(path);
  CHECK(g.memory_bytes == 85000000000);
  CHECK(g.price_per_gpu_hour_usd == 2.0);
  CHECK(g.bf16_flops == load_gpu("h100-sxm").bf16_flops);
  CHECK(g.sm_count == 132);  // from the base
  std::filesystem::remove(path);

  path = test::write_temp("gpu_full.json", R"({"id": "x1", "memory_bytes": 1000000000, "hbm_bandwidth_bytes_per_s": 1e12,
      "bf16_flops": 1e14, "fp8_flops": 0, "int8_ops": 0, "host_link_bytes_per_s": 3e10,
      "interconnect_bytes_per_s": 3e10, "price_per_gpu_hour_usd": 1})");
  g = load_gpu(path);
  CHECK(g.id == "x1");
  CHECK(g.memory_bytes == 1000000000);
  std::filesystem::remove(path);
}

TEST_CASE("bad GPU files: unknown keys, missing figures, non-positive sizes, unknown base") {
  auto err = [](const char* name, const char* text) {
    auto path = test::write_temp(name, text);
    auto e = test::input_error_of([&] { load_gpu(path); });
    std::filesystem::remove(path);
    return e;
  };
  CHECK(test::contains(err("g1.json", R"({"base": "h200", "memory_gb": 5})"), "/memory_gb: unknown key"));
  CHECK(test::contains(err("g2.json", R"({"id": "x", "memory_bytes": 1000})"), "/hbm_bandwidth_bytes_per_s"));
  CHECK(test::contains(err("g3.json", R"({"base": "h200", "memory_bytes": 0})"), "/memory_bytes"));
  CHECK(test::contains(err("g4.json", R"({"base": "h200", "bf16_flops": -1})"), "/bf16_flops"));
  CHECK(test::contains(err("g5.json", R"({"base": "h900"})"), "/base"));
  CHECK(test::contains(err("g6.json", R"({"base": "h200",)"), "g6.json:1:"));
  CHECK(test::contains(err("g7.json", R"({"base": "h200", "sm_count": -4})"), "/sm_count"));
  CHECK(test::contains(err("g8.json", R"({"base": "h200", "sm_count": 1e9})"), "/sm_count"));
  GpuSpec g = load_gpu("l4");
  g.memory_bytes = -1;
  CHECK(test::contains(test::input_error_of([&] { validate_gpu(g, "--gpu l4"); }), "memory_bytes"));
}
