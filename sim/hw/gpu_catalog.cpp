// The GPU catalog. Every figure carries its source. Conventions:
//  - memory_bytes: the total the driver reports (nvidia-smi "MiB" total × 2^20, rocm-smi bytes),
//    not the marketing "GB". visible_memory_bytes: the lower total torch.cuda.mem_get_info gives
//    vLLM, which sizes the KV cache from it, as vLLM itself logs it ("total_gpu_memory (79.19GiB)",
//    "Free memory on device (x/79.19 GiB)"), where a public log shows it; it differs by driver
//    by a few tens of MiB (PR #10511, late 2024: 79.22 GiB), so pass --gpu-memory-bytes to match a
//    particular server exactly. Unset (0) where no log shows it.
//  - FLOP/s are dense tensor-core peaks (data sheets quote "with sparsity" figures at 2×; those are
//    halved here and say so). GB/s = 1e9 bytes/s.
//  - host_link / interconnect are per direction (data sheets quote bidirectional totals; halved).
//  - interconnect_kind: the GPU-to-GPU link the data sheet names ("nvlink" for SXM parts and the
//    H100 PCIe's NVLink bridge, whose 600 GB/s the interconnect figure uses; "pcie" where the
//    data sheet lists no GPU link; "xgmi" for AMD Infinity Fabric).
//  - price_per_gpu_hour_usd: RunPod list prices as collected by deploybase.ai, "RunPod GPU Pricing:
//    2026 Comprehensive Pricing Guide" (March 10, 2026), on-demand column, unless noted. Prices
//    move; override with --price-per-gpu-hour.
#include <utility>
#include <vector>

#include "sim/hw/gpu_spec.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr double kGB = 1e9;
constexpr double kT = 1e12;

/// Bytes of a figure vLLM logged in GiB with two decimals (the log's precision, ±5 MiB).
int64_t gib_logged(double gib) { return static_cast<int64_t>(gib * 1024.0 * 1024.0 * 1024.0); }

std::vector<GpuSpec> build_catalog() {
  std::vector<GpuSpec> c;

  // NVIDIA A100 Tensor Core GPU data sheet (SXM 40GB): HBM2 1,555 GB/s; BF16 312 TFLOPS dense;
  // INT8 624 TOPS dense; no FP8; NVLink 600 GB/s (bidirectional); PCIe Gen4 64 GB/s (bidirectional).
  // Memory: nvidia-smi "A100-SXM4-40GB ... 40960MiB".
  // Price: $1.25/h, RunPod community listing quoted by theneuralbase.com "RunPod pricing per GB".
  // Seen by vLLM: "total_gpu_memory (39.50GiB)" (vLLM issue #12330, vLLM 0.6.6).
  c.push_back({"a100-40gb", "NVIDIA A100 SXM4 40GB", 40960 * kMiB, 1555 * kGB, 312 * kT, 0, 624 * kT,
               32 * kGB, 300 * kGB, 1.25, "nvlink", gib_logged(39.50)});

  // Same data sheet, SXM 80GB: HBM2e 2,039 GB/s; other figures as the 40GB part.
  // Memory: nvidia-smi "A100-SXM4-80GB ... 81920MiB". Price: RunPod "A100 SXM 80GB" $2.45/h.
  // Seen by vLLM: 79.25 GiB ("Free memory on device (78.84/79.25 GiB)" in a public vLLM 0.31.0 start
  // of Llama-3.1-8B on an "A100 80GB", Oct 2026, and in A100 runbooks for vLLM rollouts; CUDA's
  // totalGlobalMem reads 79.15-79.32 GiB across drivers). Two logs of one server in
  // scenarios/memory/vllm-startup-logs.jsonl (dl22, utilisation 0.25 and 0.5) agree: their
  // difference, 24.83 - 5.01 GiB = 0.25 x total, puts it at 79.28 +- 0.04 GiB.
  c.push_back({"a100-80gb", "NVIDIA A100 SXM4 80GB", 81920 * kMiB, 2039 * kGB, 312 * kT, 0, 624 * kT,
               32 * kGB, 300 * kGB, 2.45, "nvlink", gib_logged(79.25)});

  // NVIDIA H100 Tensor Core GPU data sheet (H100 SXM): HBM3 3.35 TB/s; BF16 1,979 TFLOPS with
  // sparsity -> 989.5 dense; FP8 3,958 sparse -> 1,979 dense; INT8 3,958 TOPS sparse -> 1,979
  // dense; NVLink 900 GB/s; PCIe Gen5 128 GB/s (both bidirectional).
  // Memory: nvidia-smi "H100 80GB HBM3 ... 81559MiB". Price: RunPod "H100 SXM" $4.76/h.
  // Seen by vLLM 0.11.0: "79.19 GiB" (llm-d capacity-planning logs, H100 80GB HBM3).
  c.push_back({"h100-sxm", "NVIDIA H100 SXM5 80GB", 81559 * kMiB, 3350 * kGB, 989.5 * kT, 1979 * kT, 1979 * kT,
               64 * kGB, 450 * kGB, 4.76, "nvlink", gib_logged(79.19)});

  // Same data sheet (H100 PCIe): HBM2e 2 TB/s; BF16 1,513 sparse -> 756.5 dense; FP8 3,026
  // sparse -> 1,513 dense; INT8 3,026 sparse -> 1,513 dense; NVLink bridge 600 GB/s; PCIe Gen5
  // 128 GB/s. Memory: "NVIDIA H100 PCIe (81559 MiB)" (TensorRT-LLM test report).
  // Price: RunPod "H100 PCIe" $3.51/h.
  c.push_back({"h100-pcie", "NVIDIA H100 PCIe 80GB", 81559 * kMiB, 2000 * kGB, 756.5 * kT, 1513 * kT, 1513 * kT,
               64 * kGB, 300 * kGB, 3.51, "nvlink"});

  // NVIDIA H200 Tensor Core GPU data sheet (H200 SXM): 141 GB HBM3e at 4.8 TB/s; BF16 1,979
  // sparse -> 989.5 dense; FP8 3,958 sparse -> 1,979 dense; INT8 same; NVLink 900 GB/s; PCIe Gen5
  // 128 GB/s. Memory: nvidia-smi "NVIDIA H200 ... 143771MiB". Price: RunPod "H200" $6.35/h.
  // Seen by vLLM: 139.81 GiB, in seven public logs found through a code search (2025-2026): a
  // vLLM 0.10.2 start of Qwen3-Next-80B-A3B at TP 2 ("Free memory on device (139.21/139.81 GiB)",
  // loading the fused-MoE config for device_name=NVIDIA_H200), a V0 start ("total_gpu_memory
  // (139.81GiB) x gpu_memory_utilization (0.85)"), and refusals on busy H200s ("(116.87/139.81
  // GiB)", nvidia-smi on the same card 143,771 MiB). Until then kvcap used nvidia-smi's 140.40.
  c.push_back({"h200", "NVIDIA H200 SXM 141GB", 143771 * kMiB, 4800 * kGB, 989.5 * kT, 1979 * kT, 1979 * kT,
               64 * kGB, 450 * kGB, 6.35, "nvlink", gib_logged(139.81)});

  // NVIDIA HGX B200 data sheet, 8 GPUs: FP16/BF16 36 PFLOPS, FP8 72 PFLOPS, INT8 72 POPS (all with
  // sparsity) -> per GPU dense 2.25 / 4.5 / 4.5 PFLOPS; HBM3e 64 TB/s total -> 8 TB/s per GPU;
  // NVLink 5 1.8 TB/s per GPU (bidirectional); PCIe Gen5 x16 host link (128 GB/s bidirectional).
  // Memory: nvidia-smi "NVIDIA B200 ... 183359MiB". Price: RunPod "B200" $10.57/h.
  // Seen by vLLM: 178.35 GiB in nine public logs found through a code search (2026), vLLM refusing
  // to start on busy cards ("Free memory on device cuda:0 (41.24/178.35 GiB) on startup is less
  // than desired GPU memory utilization (0.93, 165.87 GiB)"; one run's files are named "b200").
  c.push_back({"b200", "NVIDIA B200 180GB", 183359 * kMiB, 8000 * kGB, 2250 * kT, 4500 * kT, 4500 * kT,
               64 * kGB, 900 * kGB, 10.57, "nvlink", gib_logged(178.35)});

  // NVIDIA L40S data sheet: GDDR6 864 GB/s; BF16 362.05 TFLOPS dense (733 sparse); FP8 733 dense
  // (1,466 sparse); INT8 733 TOPS dense; PCIe Gen4 x16 64 GB/s bidirectional; no NVLink (GPU-GPU
  // over PCIe). Memory: nvidia-smi "NVIDIA L40S ... 46068MiB". Price: RunPod "L40S" $1.40/h.
  // Seen by vLLM: 44.42 GiB. A public vLLM 0.10.2 start of Qwen3-235B-A22B-Instruct-2507-FP8 on
  // 8 x L40S (log of 2025-09-24, found through a code search; nvidia-smi "NVIDIA L40S ... 46068MiB"
  // in the same file) prints "Free memory on device (43.93/44.42 GiB) on startup", and four other
  // public logs of 48 GB RunPod cards show the same total. Until then kvcap used nvidia-smi's 44.99.
  c.push_back({"l40s", "NVIDIA L40S 48GB", 46068 * kMiB, 864 * kGB, 362.05 * kT, 733 * kT, 733 * kT,
               32 * kGB, 32 * kGB, 1.40, "pcie", gib_logged(44.42)});

  // NVIDIA L4 data sheet: GDDR6 300 GB/s; BF16 242 TFLOPS, FP8 485 TFLOPS, INT8 485 TOPS (all with
  // sparsity) -> 121 / 242.5 / 242.5 dense; PCIe Gen4 x16 64 GB/s bidirectional; no NVLink.
  // Memory: nvidia-smi "NVIDIA L4 ... 23034MiB". Price: RunPod "L4" $0.78/h.
  // Seen by torch: "NVIDIA L4 (22.05 GiB)" in vLLM CI logs (pytorch issue #175666, vLLM issue #33297).
  c.push_back({"l4", "NVIDIA L4 24GB", 23034 * kMiB, 300 * kGB, 121 * kT, 242.5 * kT, 242.5 * kT,
               32 * kGB, 32 * kGB, 0.78, "pcie", gib_logged(22.05)});

  // NVIDIA Ada Lovelace GPU architecture whitepaper, RTX 4090 column: GDDR6X 1,008 GB/s; FP16/BF16
  // tensor with FP32 accumulate 165.2 TFLOPS dense; FP8 with FP32 accumulate 330.3 dense; INT8
  // 660.6 TOPS dense; PCIe Gen4 x16; no NVLink.
  // Memory: nvidia-smi "NVIDIA GeForce RTX 4090 ... 24564MiB". Price: RunPod "RTX 4090" $0.60/h.
  // Seen by torch: "GPU 0 has a total capacity of 23.64 GiB" (an out-of-memory message,
  // github.com/3DTopia/Phidias-Diffusion issue #8; not a vLLM line, 23.52-23.68 seen elsewhere).
  c.push_back({"rtx-4090", "NVIDIA GeForce RTX 4090 24GB", 24564 * kMiB, 1008 * kGB, 165.2 * kT, 330.3 * kT,
               660.6 * kT, 32 * kGB, 32 * kGB, 0.60, "pcie", gib_logged(23.64)});

  // NVIDIA A10 data sheet: GDDR6 600 GB/s; BF16 tensor 125 TFLOPS dense (250 with sparsity); INT8
  // 250 TOPS dense; no FP8 (sm_86); PCIe 4.0 x16 (64 GB/s bidirectional), no NVLink.
  // Memory: NVML total 24,146,608,128 B = 23,028 MiB (github.com/mayooot/detect-gpu issue #3);
  // seen by torch: "total capacity of 22.18 GiB" in a vLLM start (github.com/OpenBMB/MiniCPM-V
  // issue #640). Price: $1.29/h, Lambda, as listed in github.com/DS436/sanskrit-token (read 2026-09).
  c.push_back({"a10", "NVIDIA A10 24GB", 23028 * kMiB, 600 * kGB, 125 * kT, 0, 250 * kT, 32 * kGB, 32 * kGB, 1.29,
               "pcie", gib_logged(22.18)});

  // NVIDIA Ampere GA102 architecture whitepaper, appendix, GeForce RTX 3090: GDDR6X 936 GB/s;
  // FP16/BF16 tensor with FP32 accumulate 71 TFLOPS dense; INT8 284 TOPS dense; no FP8; PCIe 4.0
  // x16. Memory: nvidia-smi "24576MiB" (github.com/noonghunna/club-3090 issue #747); seen by vLLM
  // "Free memory on device (22.93/23.56 GiB)" (github.com/wtdcode/vllm-backport issue #34; an
  // older vLLM logged 23.58 GiB, vLLM issue #10517). Price: RunPod "RTX 3090" $0.39/h.
  c.push_back({"rtx-3090", "NVIDIA GeForce RTX 3090 24GB", 24576 * kMiB, 936 * kGB, 71 * kT, 0, 284 * kT, 32 * kGB,
               32 * kGB, 0.39, "pcie", gib_logged(23.56)});

  // NVIDIA RTX Blackwell architecture whitepaper, GeForce RTX 5090: BF16 tensor with FP32
  // accumulate 209.5 TFLOPS dense (419 sparse); FP8 419 dense, INT8 838 TOPS dense, GDDR7
  // 1,792 GB/s, PCIe 5.0 x16 (128 GB/s bidirectional), no NVLink (transcribed in
  // github.com/lamonoai/gpumap nvidia/GPU.md). Memory: nvidia-smi "32607MiB" (club-3090 issue
  // #1322); seen by torch "total capacity of 31.37 GiB" (github.com/Wan-Video/Wan2.1 issue #465).
  // Price: RunPod "RTX 5090" $1.22/h.
  c.push_back({"rtx-5090", "NVIDIA GeForce RTX 5090 32GB", 32607 * kMiB, 1792 * kGB, 209.5 * kT, 419 * kT, 838 * kT,
               64 * kGB, 64 * kGB, 1.22, "pcie", gib_logged(31.37)});

  // AMD Instinct MI300X data sheet: 192 GB HBM3 at 5.3 TB/s; FP16/BF16 1,307.4 TFLOPS dense; FP8
  // 2,614.9 dense; INT8 2,614.9 TOPS dense; Infinity Fabric 896 GB/s aggregate (bidirectional);
  // PCIe Gen5 x16 128 GB/s bidirectional. Memory: rocm-smi "VRAM Total Memory (B): 205822885888".
  // Price: $3.49/h on RunPod, deploybase.ai "MI300X vs H100" (2026).
  c.push_back({"mi300x", "AMD Instinct MI300X 192GB", 205822885888, 5300 * kGB, 1307.4 * kT, 2614.9 * kT,
               2614.9 * kT, 64 * kGB, 448 * kGB, 3.49, "xgmi"});

  // The GPUs below were added from scenarios/memory/gpu-datasheets.json, which quotes each
  // figure with its source; where a figure has none, the entry says what stands in for it.

  // NVIDIA A10G (AWS g5): 23028 MiB (nvidia-smi, NVIDIA/DCGM issue #232); GDDR6 600 GB/s and
  // 70 TF tensor (Baseten, "NVIDIA A10 vs A10G", linking AWS's A10G data sheet); no FP8 (sm_86).
  // No A10G INT8 figure was found (0 here: unknown). Host link and GPU-GPU: the A10's PCIe 4.0 x16
  // (same GA102 PCIe board; no A10G figure found). Seen by torch: "22.20 GiB total capacity"
  // (XavierXiao/Dreambooth-Stable-Diffusion issue #18, g5.12xlarge). Price: AWS g5.xlarge
  // $1.006/h (DS436/sanskrit-token RENTING_A_GPU.md, read 2026-09-09).
  c.push_back({"a10g", "NVIDIA A10G 24GB", 23028 * kMiB, 600 * kGB, 70 * kT, 0, 0, 32 * kGB, 32 * kGB, 1.006, "pcie",
               gib_logged(22.20)});

  // NVIDIA GB200 NVL72, one Blackwell GPU: 189471 MiB (nvidia-smi "NVIDIA GB200"); NVIDIA Blackwell
  // data sheet, "Individual Blackwell GPU Specifications": 186 GB HBM3E at 8 TB/s, FP16/BF16 5
  // PFLOPS, FP8 10 PFLOPS, INT8 10 POPS, all with sparsity (dense = half: 2.5 / 5 / 5), 5th-gen
  // NVLink 1.8 TB/s and PCIe Gen5 128 GB/s (both bidirectional; halved). The Grace-GPU NVLink-C2C
  // is not in that table, so the swap tier prices the PCIe figure. No public price: 0 (unknown).
  c.push_back({"gb200", "NVIDIA GB200 (NVL72, per GPU) 186GB", 189471 * kMiB, 8000 * kGB, 2500 * kT,
               5000 * kT, 5000 * kT, 64 * kGB, 900 * kGB, 0, "nvlink"});

  // AMD Instinct MI325X: 256 GiB HBM3E (ROCm GPU specs "VRAM (GiB) 256"; no rocm-smi total found)
  // at 6.0 TB/s (Vultr's inference cookbook, from AMD's product page); BF16 1,307.4 and FP8
  // 2,614.9 TFLOPS dense, INT8 2.6 POPS (secondary pages, see the datasheet notes); PCIe Gen5 x16.
  // The Infinity Fabric's aggregate is stated nowhere found: the MI300X's 448 GB/s per direction
  // stands in (same CDNA3 OAM platform, seven links per GPU). Price: a $2.00-2.25/h range with no
  // provider or date: 0 (unknown).
  c.push_back({"mi325x", "AMD Instinct MI325X 256GB", int64_t{256} << 30, 6000 * kGB, 1307.4 * kT, 2614.9 * kT,
               2600 * kT, 64 * kGB, 448 * kGB, 0, "xgmi"});

  // NVIDIA GB10 (DGX Spark): 128 GB of LPDDR5x shared by CPU and GPU at 273 GB/s (Hugging Face's
  // DGX Spark handbook); nvidia-smi reports no total ("Not Supported"), so memory_bytes is the
  // 128 GiB of the box and CUDA sees 121.69 GiB ("Free memory on cuda:0 ... of 121.69", MiaAI-Lab
  // issue #47, 2026-08-30; the OS and page cache take part of it, so vLLM often starts with less
  // free). NVIDIA publishes only "1 PFLOP FP4 with sparsity": BF16 125 / FP8 250 / INT8 250 TFLOPS
  // dense here are DERIVED with the B200 data sheet's own ratios (FP4 sparse = 8x BF16 dense = 4x
  // FP8 dense), not published figures. Host link: unified memory, so the memory bandwidth. GPU to
  // GPU: none on the package; two boxes cluster over ConnectX-7 200 Gb/s (25 GB/s per direction).
  c.push_back({"gb10", "NVIDIA GB10 (DGX Spark) 128GB unified", int64_t{128} << 30, 273 * kGB, 125 * kT, 250 * kT,
               250 * kT, 273 * kGB, 25 * kGB, 0, "pcie", gib_logged(121.69)});
  // NVIDIA H20 (96 GB HBM3; no NVIDIA data sheet is public): 4,000 GB/s, FP16/BF16 148 TFLOPS
  // dense (willitrunai.com/es/gpus/h20-96gb; zangshuxian.com "H20的FP16稠密算力为148TFLOPS", INT8 296
  // TOPS), FP8 296 dense (github.com/lamonoai/gpumap nvidia/GPU.md, "Nvidia HGX H20"), NVLink 900 GB/s
  // (bidirectional; halved). Memory: nvidia-smi 97871 MiB (scenarios/memory/gpu-datasheets.json).
  // Torch's total is seen only in unattributed notes (95.1-95.22 GiB), so it is left unset. No
  // host-link figure was found: the H100's PCIe Gen5 x16 stands in (same HGX board). Price: 0 (unknown).
  c.push_back({"h20", "NVIDIA H20 96GB", 97871 * kMiB, 4000 * kGB, 148 * kT, 296 * kT, 296 * kT, 64 * kGB, 450 * kGB, 0,
               "nvlink"});

  // NVIDIA H20-3e ("H20 141GB", HBM3e): 143771 MiB in nvidia-smi (sglang issue #6418, the H200's
  // figure); seen by vLLM "total_gpu_memory (139.72GiB)" (vLLM issue #13074, V0, 2 x 8 GPUs; the
  // same log is a row of scenarios/memory/vllm-startup-logs.jsonl). No data sheet gives its
  // bandwidth or compute: the 96 GB H20's 4.0 TB/s and 148 / 296 TFLOPS stand in (the 3e changes
  // the memory; its bandwidth is likely higher, unpublished). NVLink mesh as the H20's.
  c.push_back({"h20-3e", "NVIDIA H20-3e 141GB", 143771 * kMiB, 4000 * kGB, 148 * kT, 296 * kT, 296 * kT, 64 * kGB,
               450 * kGB, 0, "nvlink", gib_logged(139.72)});

  // NVIDIA RTX A5000 (GA102, 24 GB GDDR6 with ECC): 768 GB/s, BF16 tensor with FP32 accumulate 111
  // TFLOPS dense, INT8 222 TOPS dense, no FP8 (sm_86), PCIe 4.0 x16 (github.com/lamonoai/gpumap
  // nvidia/GPU.md, Ampere table, transcribing NVIDIA's spec sheet). Its NVLink bridge is not
  // counted: no A5000 figure was found, so GPU-GPU traffic takes PCIe. Memory: no nvidia-smi total
  // was found; the 24 GiB of the card (24576 MiB, as the RTX 3090's GA102 board reports) stands in.
  // Seen by vLLM: a vLLM 0.21 start on one (LMCache issue #3430) says "--gpu-memory-utilization=
  // 0.9764 is equivalent to 0.9543 without CUDA graph memory profiling" for a 0.52 GiB estimate:
  // 0.52 / 0.0221 = 23.5 GiB (23.25-23.81 within the log's rounding), the RTX 3090's measured 23.56
  // GiB (same GA102 board and 24 GB), which is taken. Price: 0 (unknown).
  c.push_back({"rtx-a5000", "NVIDIA RTX A5000 24GB", 24576 * kMiB, 768 * kGB, 111 * kT, 0, 222 * kT, 32 * kGB, 32 * kGB,
               0, "pcie", gib_logged(23.56)});

  // Compute capability (NVIDIA's CUDA GPUs table, developer.nvidia.com/cuda-gpus): Ampere A100 8.0,
  // A10/A10G/RTX 3090 8.6, Ada L4/L40S/RTX 4090 8.9, Hopper 9.0, Blackwell B200/GB200 10.0,
  // RTX 5090 12.0, GB10 12.1; AMD parts have none.
  const std::pair<const char*, int> capability[] = {
      {"a100-40gb", 80}, {"a100-80gb", 80}, {"h100-sxm", 90}, {"h100-pcie", 90}, {"h200", 90},   {"b200", 100},
      {"l40s", 89},      {"l4", 89},        {"rtx-4090", 89}, {"a10", 86},       {"rtx-3090", 86}, {"rtx-5090", 120},
      {"a10g", 86},      {"gb200", 100},    {"gb10", 121},    {"h20", 90},       {"h20-3e", 90},   {"rtx-a5000", 86}};
  for (GpuSpec& g : c)
    for (const auto& [id, cc] : capability)
      if (g.id == id) g.compute_capability = cc;
  return c;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = build_catalog();
  return catalog;
}

}  // namespace kvcap
