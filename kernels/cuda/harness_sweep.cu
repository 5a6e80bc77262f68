// Timing sweep of the two KV kernels over batch, context, page size, head_dim, GQA and KV dtype.
// Inputs are device-filled random encodings; when one configuration's KV is smaller than 4 × L2,
// launches rotate over disjoint page sets so each launch reads from HBM, not from L2.
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <numeric>
#include <vector>

#include "kernels/cuda/harness.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/calibrate/sweep_plan.hpp"
#include "kernels/reference/paged_kv_pool.hpp"

namespace kvcap::kern {

namespace {

/// Two arenas (K and V) of random encodings, reused by every case of one storage dtype.
struct Arena {
  DeviceBuffer k, v, ks, vs;
};

void time_decode(KvStorage s, const std::string& variant, const DecodeCase& c, Arena& arena, int sm_count,
                 int64_t l2_bytes, RawRun& run) {
  const bool vec = variant != kBaselineVariant;
  const DecodeLauncher decode = decode_launcher(variant);
  PagedKvView v;
  v.storage = s;
  v.layout = KvLayout::kNHD;
  v.page_size = c.page_size;
  v.num_kv_heads = c.kv_heads;
  v.head_dim = c.head_dim;
  v.group_size = kv_storage_scaled(s) ? kSweepGroupSize : c.head_dim;
  make_strides(v);
  const int64_t pool_pages = arena_pages(s, c);
  const int64_t pages_per_seq = (c.context + c.page_size - 1) / c.page_size;
  const int64_t set_pages = c.batch * pages_per_seq;
  if (set_pages > pool_pages) {
    std::printf("skip decode %s batch=%lld ctx=%lld: needs %lld pages, arena has %lld\n", kv_storage_name(s),
                static_cast<long long>(c.batch), static_cast<long long>(c.context), static_cast<long long>(set_pages),
                static_cast<long long>(pool_pages));
    return;
  }
  int32_t vec_blocks = 0;
  if (vec) {
    // The GPU's own occupancy plans the splits; the dry run assumed vec_decode_expected_blocks_per_sm.
    vec_blocks = paged_decode_vec_blocks_per_sm(s, c.head_dim, variant == kVecSpreadVariant);
    if (vec_blocks != vec_decode_expected_blocks_per_sm(s, c.head_dim))
      std::printf("note: %s %s hd=%d: %d blocks resident per SM, the dry run assumed %d (splits differ from it)\n",
                  variant.c_str(), kv_storage_name(s), c.head_dim, vec_blocks, vec_decode_expected_blocks_per_sm(s, c.head_dim));
    if (vec_blocks < 1) throw std::runtime_error("paged decode vec: occupancy 0 blocks per SM");
  }
  const DecodePlan plan = decode_plan_for(variant, c, sm_count, vec_blocks);
  RawDecode d = decode_record(s, c, plan, variant);
  // Launches rotate over disjoint page sets until together they exceed 4 × L2, so each launch
  // reads its KV from HBM as a serving step does (a small point alone would sit in L2).
  const int64_t sets = rotation_sets(static_cast<int64_t>(d.kv_bytes), l2_bytes, pool_pages, set_pages);
  // Scatter the pages: a random permutation of the pool, as a long-running allocator leaves it.
  std::vector<int32_t> ids(static_cast<size_t>(pool_pages));
  std::iota(ids.begin(), ids.end(), 0);
  UniformSource rng(static_cast<uint64_t>(c.batch * 1315423911ll + c.context));
  for (int64_t i = pool_pages - 1; i > 0; --i)
    std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(rng.next_bits() % static_cast<uint64_t>(i + 1))]);
  std::vector<int32_t> indptr{0}, indices, last;
  indices.reserve(static_cast<size_t>(sets * set_pages));
  for (int64_t sq = 0; sq < sets * c.batch; ++sq) {
    for (int64_t p = 0; p < pages_per_seq; ++p) indices.push_back(ids[static_cast<size_t>(sq * pages_per_seq + p)]);
    indptr.push_back(static_cast<int32_t>(indices.size()));
    last.push_back(static_cast<int32_t>(c.context - (pages_per_seq - 1) * c.page_size));
  }
  DeviceBuffer d_indptr = to_device(indptr), d_indices = to_device(indices), d_last = to_device(last);
  const int64_t qo_elems = c.batch * c.q_heads * c.head_dim;
  DeviceBuffer q(static_cast<size_t>(qo_elems * 2)), o(static_cast<size_t>(qo_elems * 2));
  launch_fill_random(q.get<uint8_t>(), static_cast<int64_t>(q.bytes()), KvStorage::kBF16, 77, nullptr);
  DeviceBuffer ws(static_cast<size_t>(decode_workspace_bytes(static_cast<int32_t>(c.batch), c.q_heads, c.head_dim, plan)));
  v.batch = static_cast<int32_t>(c.batch);
  v.num_pages = pool_pages;
  v.k_data = arena.k.get<uint8_t>();
  v.v_data = arena.v.get<uint8_t>();
  v.k_scales = arena.ks.get<float>();
  v.v_scales = arena.vs.get<float>();
  v.indices = d_indices.get<int32_t>();
  const float sm_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  auto launch = [&](int i) {
    PagedKvView vi = v;
    const int64_t set = i % sets;
    vi.indptr = d_indptr.get<int32_t>() + set * c.batch;
    vi.last_page_len = d_last.get<int32_t>() + set * c.batch;
    decode(vi, QoType::kBF16, q.get<uint16_t>(), c.q_heads, sm_scale, plan, o.get<uint16_t>(), ws.get(), nullptr);
  };
  d.time_s = time_median_s(launch, kWarmupLaunches, kTimedRounds, static_cast<int>(std::max<int64_t>(sets, 4)));
  run.decode.push_back(d);
  std::printf("decode %-8s %-10s batch=%4lld ctx=%6lld page=%2d hd=%3d gqa=%2d splits=%3d sets=%3lld  %9.2f us  %7.1f GB/s\n",
              d.kv_dtype.c_str(), variant.c_str(), static_cast<long long>(c.batch), static_cast<long long>(c.context), c.page_size,
              c.head_dim, c.q_heads / c.kv_heads, plan.num_splits, static_cast<long long>(sets), d.time_s * 1e6,
              d.kv_bytes / d.time_s * 1e-9);
}

void time_append(KvStorage s, const std::string& variant, int64_t tokens, const SweepShape& sh, Arena& arena,
                 RawRun& run) {
  PagedKvView v;
  v.storage = s;
  v.layout = KvLayout::kNHD;
  v.page_size = 16;
  v.num_kv_heads = static_cast<int32_t>(sh.kv_heads);
  v.head_dim = static_cast<int32_t>(sh.head_dim);
  v.group_size = kv_storage_scaled(s) ? kSweepGroupSize : v.head_dim;
  make_strides(v);
  const int64_t pool_pages = arena_pages(s, {1, 16, 16, v.head_dim, v.num_kv_heads, v.num_kv_heads});
  const int64_t pool_slots = pool_pages * v.page_size;
  if (tokens > pool_slots) return;
  // Random slots over the pool, as a batch of sequences appending into scattered pages does
  // (distinct up to page collisions, which only make two writes land on one slot).
  std::vector<int64_t> slots(static_cast<size_t>(tokens));
  UniformSource rng(static_cast<uint64_t>(tokens) * 977);
  for (auto& x : slots) x = static_cast<int64_t>(rng.next_bits() % static_cast<uint64_t>(pool_pages)) * v.page_size;
  for (int64_t i = 0; i < tokens; ++i) slots[static_cast<size_t>(i)] += i % v.page_size;
  DeviceBuffer d_slots = to_device(slots);
  const int64_t elems = tokens * sh.kv_heads * sh.head_dim;
  DeviceBuffer kn(static_cast<size_t>(elems * 2)), vn(static_cast<size_t>(elems * 2));
  launch_fill_random(kn.get<uint8_t>(), static_cast<int64_t>(kn.bytes()), KvStorage::kBF16, 5, nullptr);
  launch_fill_random(vn.get<uint8_t>(), static_cast<int64_t>(vn.bytes()), KvStorage::kBF16, 6, nullptr);
  v.num_pages = pool_pages;
  v.k_data = arena.k.get<uint8_t>();
  v.v_data = arena.v.get<uint8_t>();
  v.k_scales = arena.ks.get<float>();
  v.v_scales = arena.vs.get<float>();
  auto launch = [&](int) {
    append_launcher(variant)(
        v, QoType::kBF16, kn.get<uint16_t>(), vn.get<uint16_t>(), d_slots.get<int64_t>(), tokens, nullptr);
  };
  RawAppend a = append_record(s, tokens, sh, variant);
  a.time_s = time_median_s(launch, kWarmupLaunches, kTimedRounds, 4);
  run.append.push_back(a);
  std::printf("append %-8s %-10s tokens=%6lld  %9.2f us  %7.1f GB/s\n", a.kv_dtype.c_str(), variant.c_str(),
              static_cast<long long>(tokens),
              a.time_s * 1e6, a.bytes / a.time_s * 1e-9);
}

}  // namespace

std::string run_kernel_sweep(const HarnessOptions& opt, const std::string& variant, int sm_count, int64_t l2_bytes,
                             double deadline_s, RawRun& run, const std::function<void()>& checkpoint) {
  const std::vector<DecodeCase> cases = decode_cases(opt.shape, opt.quick);
  Arena arena;
  arena.k = DeviceBuffer(static_cast<size_t>(kSweepArenaBytes));
  arena.v = DeviceBuffer(static_cast<size_t>(kSweepArenaBytes));
  arena.ks = DeviceBuffer(static_cast<size_t>(kSweepScaleArenaBytes));
  arena.vs = DeviceBuffer(static_cast<size_t>(kSweepScaleArenaBytes));
  std::string skipped;
  for (KvStorage s : kSweepStorages) {
    const char* dt = kv_storage_name(s);
    // A variant that failed a check of this dtype is not timed for it (it would not be fitted).
    const bool decode_ok = run.variant_usable("paged_decode", variant, dt);
    const bool append_ok = run.variant_usable("quantize_append", variant, dt);
    if (!decode_ok || !append_ok)
      skipped += std::string(skipped.empty() ? "" : ", ") + dt + (decode_ok ? "" : " decode") + (append_ok ? "" : " append");
    if (!decode_ok && !append_ok) continue;
    launch_fill_random(arena.k.get<uint8_t>(), kSweepArenaBytes, s, 11, nullptr);
    launch_fill_random(arena.v.get<uint8_t>(), kSweepArenaBytes, s, 12, nullptr);
    launch_fill_scales(arena.ks.get<float>(), kSweepScaleArenaBytes / 4, 0.001f, 0.02f, 13, nullptr);
    launch_fill_scales(arena.vs.get<float>(), kSweepScaleArenaBytes / 4, 0.001f, 0.02f, 14, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; decode_ok && i < cases.size(); ++i) {
      if (harness_elapsed_s() > deadline_s) {
        const std::string note = "sweep time budget reached at " + variant + " " + dt + " decode point " +
                                 std::to_string(i + 1) + " of " + std::to_string(cases.size()) +
                                 "; later points and KV dtypes not measured";
        std::printf("%s\n", note.c_str());
        return note;
      }
      time_decode(s, variant, cases[i], arena, sm_count, l2_bytes, run);
    }
    if (append_ok)
      for (int64_t tokens : append_token_counts(opt.quick)) time_append(s, variant, tokens, opt.shape, arena, run);
    std::fflush(stdout);
    checkpoint();
  }
  // Said, not an incompleteness: the failed checks are in the raw file and the fit excludes them.
  if (!skipped.empty()) std::printf("%s variant not timed for %s: its checks failed there\n", variant.c_str(), skipped.c_str());
  return "";
}

}  // namespace kvcap::kern
