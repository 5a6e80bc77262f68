// Checks every kernel against the CPU reference on fresh random inputs before anything is timed:
//  - quantize-append must write exactly the reference's bytes and scales (same encoding code);
//  - paged decode (one pass, and split-KV + merge) must match the float64 reference within the
//    q/o dtype's rounding: bf16 keeps 8 significant bits, so rounding the output costs up to 2^-8
//    relative per element (3.9e-3); fp16 keeps 11 (4.9e-4). fp32 accumulation adds ~1e-6. Bounds:
//    5e-3 (bf16), 1e-3 (fp16), applied to the WORST (sequence, query head) row, so one wrong row
//    cannot hide among correct ones. Outputs and the split workspace are poisoned with NaN before
//    each launch; any NaN or unwritten element fails.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/calibrate/sweep_plan.hpp"
#include "kernels/cuda/harness.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/reference/paged_kv_pool.hpp"
#include "kernels/reference/reference.hpp"

namespace kvcap::kern {

namespace {

using CheckConfig = CheckShape;

const char* qo_name(QoType t) { return t == QoType::kBF16 ? "bf16" : "fp16"; }

/// Device copy of a host pool, with a view whose pointers are device pointers.
struct DevicePool {
  DeviceBuffer k, v, ks, vs, indptr, indices, last;
  PagedKvView view;
  explicit DevicePool(PagedKvPool& host)
      : k(to_device(host.k)), v(to_device(host.v)), ks(to_device(host.k_scales)), vs(to_device(host.v_scales)),
        indptr(to_device(host.indptr)), indices(to_device(host.indices)), last(to_device(host.last_page_len)) {
    view = host.view();
    view.k_data = k.get<uint8_t>();
    view.v_data = v.get<uint8_t>();
    view.k_scales = ks.get<float>();
    view.v_scales = vs.get<float>();
    view.indptr = indptr.get<int32_t>();
    view.indices = indices.get<int32_t>();
    view.last_page_len = last.get<int32_t>();
  }
};

RawCheck base_check(const char* kernel, const std::string& variant, const CheckConfig& c) {
  RawCheck r;
  r.kernel = kernel;
  r.variant = variant;
  r.kv_dtype = kv_storage_name(c.storage);
  r.qo_dtype = qo_name(c.qo);
  r.head_dim = c.head_dim;
  r.page_size = c.page_size;
  r.gqa = c.gqa;
  r.num_kv_heads = c.num_kv_heads;
  r.layout = c.layout == KvLayout::kNHD ? "NHD" : "HND";
  return r;
}

/// A check's kernels finish in milliseconds; 20 s means a hang (a deadlocked barrier, a loop
/// that never ends), not a slow GPU.
constexpr double kCheckSyncSeconds = 20;

void check_one(const CheckConfig& c, uint64_t seed, const std::string& variant, RawRun& run) {
  const DecodeLauncher decode = decode_launcher(variant);
  const AppendLauncher append = append_launcher(variant);
  const std::vector<int64_t> lens = {17, 54, 97, 2048};  // odd lengths end mid-page; 2048 = max here
  PagedKvPoolSpec spec;
  spec.storage = c.storage;
  spec.layout = c.layout;
  spec.page_size = c.page_size;
  spec.num_kv_heads = c.num_kv_heads;
  spec.head_dim = c.head_dim;
  spec.group_size = 64;
  spec.seq_lens = lens;
  spec.spare_pages = 13;
  spec.seed = seed;
  PagedKvPool host(spec);  // poisoned
  DevicePool dev(host);    // poisoned too
  PagedKvView hv = host.view();

  // Inputs: every token of every sequence, [Σ tokens][H][D]; slot of each token.
  UniformSource src(seed ^ 0x5eed);
  const int64_t row = int64_t{c.num_kv_heads} * c.head_dim;
  std::vector<uint16_t> k_all, v_all;
  std::vector<int64_t> slots;
  for (int32_t b = 0; b < hv.batch; ++b) {
    const int64_t len = lens[static_cast<size_t>(b)];
    auto k = random_qo(c.qo, len * row, 2.0, src);
    auto v = random_qo(c.qo, len * row, 2.0, src);
    quantize_append_reference(hv, b, 0, len, c.qo, k.data(), v.data());
    k_all.insert(k_all.end(), k.begin(), k.end());
    v_all.insert(v_all.end(), v.begin(), v.end());
    for (int64_t t = 0; t < len; ++t) slots.push_back(hv.page_of(b, t) * c.page_size + hv.slot_of(t));
  }
  DeviceBuffer dk = to_device(k_all), dv = to_device(v_all), dslots = to_device(slots);
  append(dev.view, c.qo, dk.get<uint16_t>(), dv.get<uint16_t>(), dslots.get<int64_t>(),
         static_cast<int64_t>(slots.size()), nullptr);
  sync_within(kCheckSyncSeconds, "quantize_append [" + variant + "] " + kv_storage_name(c.storage));
  {
    std::vector<uint8_t> gk(host.k.size()), gv(host.v.size());
    std::vector<float> gks(host.k_scales.size()), gvs(host.v_scales.size());
    to_host(dev.k, gk);
    to_host(dev.v, gv);
    to_host(dev.ks, gks);
    to_host(dev.vs, gvs);
    int64_t mismatches = 0, total = 0;
    for (size_t i = 0; i < gk.size(); ++i) mismatches += (gk[i] != host.k[i]) + (gv[i] != host.v[i]);
    total += 2 * static_cast<int64_t>(gk.size());
    // Scales compared as bits: poisoned (NaN) slots must stay the same NaN on both sides.
    for (size_t i = 0; i < gks.size(); ++i)
      mismatches += (std::memcmp(&gks[i], &host.k_scales[i], 4) != 0) + (std::memcmp(&gvs[i], &host.v_scales[i], 4) != 0);
    total += 2 * static_cast<int64_t>(gks.size()) * 4;
    RawCheck r = base_check("quantize_append", variant, c);
    r.rel_error = static_cast<double>(mismatches) / static_cast<double>(total);
    r.bound = 0;
    r.all_written = r.finite = mismatches == 0;
    r.passed = mismatches == 0;
    run.checks.push_back(r);
  }

  // Decode on the cache the GPU just wrote (equal to the host's when the append check passed).
  const int32_t hq = c.gqa * c.num_kv_heads;
  auto q = random_qo(c.qo, int64_t{hv.batch} * hq * c.head_dim, 1.0, src);
  const double sm_scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  std::vector<double> ref(q.size());
  paged_decode_reference(hv, c.qo, q.data(), hq, sm_scale, nullptr, ref.data());
  DeviceBuffer dq = to_device(q);
  DeviceBuffer dout(q.size() * 2);
  for (bool split : {false, true}) {
    DecodePlan plan;
    // 293 tokens per split: 7 splits over the 2048-token sequence whose boundaries fall inside
    // pages and tiles (as plan_decode's ceil(len / splits) chunks do), the last one short, and
    // empty splits for the shorter sequences (their partials must be skipped by the merge).
    plan.chunk_tokens = split ? 293 : 2048;
    plan.num_splits = split ? 7 : 1;
    DeviceBuffer ws(static_cast<size_t>(decode_workspace_bytes(hv.batch, hq, c.head_dim, plan)));
    CUDA_CHECK(cudaMemset(dout.get(), 0xff, dout.bytes()));  // 0xffff is NaN in bf16 and fp16
    // Partials the decode kernel fails to write must reach the merge as NaN, not as whatever
    // cudaMalloc left there (often zeros, which a merge could silently weigh in).
    if (ws.bytes()) CUDA_CHECK(cudaMemset(ws.get(), 0xff, ws.bytes()));
    decode(dev.view, c.qo, dq.get<uint16_t>(), hq, static_cast<float>(sm_scale), plan, dout.get<uint16_t>(), ws.get(),
           nullptr);
    sync_within(kCheckSyncSeconds, "paged_decode [" + variant + "] " + kv_storage_name(c.storage));
    std::vector<uint16_t> o(q.size());
    to_host(dout, o);
    RawCheck r = base_check(split ? "paged_decode_split" : "paged_decode", variant, c);
    r.all_written = r.finite = true;
    double worst = 0;
    const size_t d = static_cast<size_t>(c.head_dim);
    for (size_t row = 0; row < o.size() / d; ++row) {
      double num = 0, den = 0;
      for (size_t i = row * d; i < (row + 1) * d; ++i) {
        if (o[i] == 0xffff) r.all_written = false;
        const double x = qo_to_float(c.qo, o[i]);
        if (!std::isfinite(x)) r.finite = false;
        num += (x - ref[i]) * (x - ref[i]);
        den += ref[i] * ref[i];
      }
      // A row's relative error; NaN (or 0/0) propagates into `worst` and fails the check.
      const double e = std::sqrt(num / den);
      worst = std::isnan(e) || std::isnan(worst) ? std::nan("") : std::max(worst, e);
    }
    r.rel_error = worst;
    r.bound = c.qo == QoType::kBF16 ? 5e-3 : 1e-3;
    r.passed = r.all_written && r.finite && std::isfinite(r.rel_error) && r.rel_error <= r.bound;
    run.checks.push_back(r);
  }
}

}  // namespace

std::function<int(const std::string&)> g_on_hang;

void sync_within(double seconds, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(nullptr);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) CUDA_CHECK(e);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      const std::string why = what + ": kernel still running after " + std::to_string(static_cast<int>(seconds)) + " s (hung)";
      std::fprintf(stderr, "kvcap-gpu-calibrate: %s; ending the process\n", why.c_str());
      const int code = g_on_hang ? g_on_hang(why) : 3;
      std::fflush(nullptr);
      std::_Exit(code);  // no destructors: freeing memory a hung kernel uses would wait forever
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

void run_checks(uint64_t seed, const std::string& variant, RawRun& run) {
  uint64_t n = 0;
  for (const CheckShape& c : check_shapes()) {
    const size_t before = run.checks.size();
    check_one(c, seed + 1000 * ++n, variant, run);
    for (size_t i = before; i < run.checks.size(); ++i) {
      const RawCheck& r = run.checks[i];
      std::printf("check %-19s %-10s kv=%-8s qo=%s hd=%3lld page=%2lld gqa=%2lld kvh=%lld %s  err=%.3g (bound %.3g)  %s\n",
                  r.kernel.c_str(), r.variant.c_str(), r.kv_dtype.c_str(), r.qo_dtype.c_str(), static_cast<long long>(r.head_dim),
                  static_cast<long long>(r.page_size), static_cast<long long>(r.gqa),
                  static_cast<long long>(r.num_kv_heads), r.layout.c_str(), r.rel_error, r.bound,
                  r.passed ? "PASS" : "FAIL");
    }
  }
  std::fflush(stdout);
}

}  // namespace kvcap::kern
