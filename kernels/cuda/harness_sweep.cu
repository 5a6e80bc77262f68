// Timing sweep of the two KV kernels over batch, context, page size, head_dim, GQA and KV dtype.
// Inputs are device-filled random encodings; when one configuration's KV is smaller than 4 × L2,
// launches rotate over disjoint page sets so each launch reads from HBM, not from L2.
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "kernels/cuda/harness.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/reference/paged_kv_pool.hpp"

namespace kvcap::kern {

namespace {

constexpr KvStorage kStorages[] = {KvStorage::kBF16, KvStorage::kFP16, KvStorage::kFP8E4M3, KvStorage::kINT8,
                                   KvStorage::kINT4};
constexpr int32_t kGroup = 64;

struct DecodeCase {
  int64_t batch, context;
  int32_t page_size, head_dim, q_heads, kv_heads;
};

/// Two arenas (K and V) of random encodings, reused by every case of one storage dtype.
struct Arena {
  DeviceBuffer k, v, ks, vs;
  int64_t bytes = 0;
};

int64_t row_bytes(KvStorage s, int32_t head_dim) { return int64_t{head_dim} * kv_storage_bits(s) / 8; }

void time_decode(KvStorage s, const DecodeCase& c, Arena& arena, int sm_count, int64_t l2_bytes, RawRun& run) {
  PagedKvView v;
  v.storage = s;
  v.layout = KvLayout::kNHD;
  v.page_size = c.page_size;
  v.num_kv_heads = c.kv_heads;
  v.head_dim = c.head_dim;
  v.group_size = kv_storage_scaled(s) ? kGroup : c.head_dim;
  make_strides(v);
  const int64_t page_bytes = v.page_bytes();
  const int64_t pool_pages = std::min(arena.bytes / page_bytes, v.page_scale_bytes() > 0
                                                                     ? static_cast<int64_t>(arena.ks.bytes()) / v.page_scale_bytes()
                                                                     : arena.bytes / page_bytes);
  const int64_t pages_per_seq = (c.context + c.page_size - 1) / c.page_size;
  const int64_t set_pages = c.batch * pages_per_seq;
  if (set_pages > pool_pages) {
    std::printf("skip decode %s batch=%lld ctx=%lld: needs %lld pages, arena has %lld\n", kv_storage_name(s),
                static_cast<long long>(c.batch), static_cast<long long>(c.context), static_cast<long long>(set_pages),
                static_cast<long long>(pool_pages));
    return;
  }
  const int64_t bytes_per_token = 2 * c.kv_heads * (row_bytes(s, c.head_dim) + v.page_scale_bytes() / (c.page_size * int64_t{c.kv_heads}));
  const int64_t set_bytes = set_pages * page_bytes * 2;
  const int64_t sets = set_bytes >= 4 * l2_bytes ? 1 : std::max<int64_t>(1, std::min<int64_t>(8, pool_pages / set_pages));
  // Scatter the pages: a random permutation of the pool, as a long-running allocator leaves it.
  std::vector<int32_t> ids(static_cast<size_t>(pool_pages));
  std::iota(ids.begin(), ids.end(), 0);
  UniformSource rng(static_cast<uint64_t>(c.batch * 1315423911ll + c.context));
  for (int64_t i = pool_pages - 1; i > 0; --i)
    std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(rng.next_bits() % static_cast<uint64_t>(i + 1))]);
  std::vector<int32_t> indptr{0}, indices, last;
  for (int64_t sq = 0; sq < sets * c.batch; ++sq) {
    for (int64_t p = 0; p < pages_per_seq; ++p) indices.push_back(ids[static_cast<size_t>(sq * pages_per_seq + p)]);
    indptr.push_back(static_cast<int32_t>(indices.size()));
    last.push_back(static_cast<int32_t>(c.context - (pages_per_seq - 1) * c.page_size));
  }
  DeviceBuffer d_indptr = to_device(indptr), d_indices = to_device(indices), d_last = to_device(last);
  const int64_t qo_elems = c.batch * c.q_heads * c.head_dim;
  DeviceBuffer q(static_cast<size_t>(qo_elems * 2)), o(static_cast<size_t>(qo_elems * 2));
  launch_fill_random(q.get<uint8_t>(), static_cast<int64_t>(q.bytes()), KvStorage::kBF16, 77, nullptr);
  const DecodePlan plan = plan_decode(static_cast<int32_t>(c.batch), c.kv_heads, c.context, sm_count);
  DeviceBuffer ws(static_cast<size_t>(decode_workspace_bytes(static_cast<int32_t>(c.batch), c.q_heads, c.head_dim, plan)));
  v.batch = static_cast<int32_t>(c.batch);
  v.num_pages = pool_pages;
  v.k_data = arena.k.get<uint8_t>();
  v.v_data = arena.v.get<uint8_t>();
  v.k_scales = arena.ks.get<float>();
  v.v_scales = arena.vs.get<float>();
  v.indices = d_indices.get<int32_t>();
  v.last_page_len = d_last.get<int32_t>();
  const float sm_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  auto launch = [&](int i) {
    PagedKvView vi = v;
    const int64_t set = i % sets;
    vi.indptr = d_indptr.get<int32_t>() + set * c.batch;
    vi.last_page_len = d_last.get<int32_t>() + set * c.batch;
    launch_paged_decode(vi, QoType::kBF16, q.get<uint16_t>(), c.q_heads, sm_scale, plan, o.get<uint16_t>(), ws.get(), nullptr);
  };
  const double t = time_median_s(launch, 3, 15, static_cast<int>(std::max<int64_t>(sets, 4)));
  RawDecode d;
  d.kv_dtype = kv_storage_name(s);
  d.batch = c.batch;
  d.context = c.context;
  d.page_size = c.page_size;
  d.head_dim = c.head_dim;
  d.num_q_heads = c.q_heads;
  d.num_kv_heads = c.kv_heads;
  d.splits = plan.num_splits;
  d.kv_bytes = static_cast<double>(c.batch * c.context * bytes_per_token);
  d.total_bytes = d.kv_bytes + 4.0 * static_cast<double>(qo_elems) +
                  4.0 * static_cast<double>(c.batch * (pages_per_seq + 2)) + 2.0 * static_cast<double>(ws.bytes());
  d.time_s = t;
  d.allocated_bytes_per_token = bytes_per_token;
  d.block_table_bytes = 4 * (c.batch * pages_per_seq + 2 * c.batch + 1);  // indices, last_page_len, indptr
  run.decode.push_back(d);
  std::printf("decode %-8s batch=%4lld ctx=%6lld page=%2d hd=%3d gqa=%2d splits=%3d  %9.2f us  %7.1f GB/s\n",
              d.kv_dtype.c_str(), static_cast<long long>(c.batch), static_cast<long long>(c.context), c.page_size,
              c.head_dim, c.q_heads / c.kv_heads, plan.num_splits, t * 1e6, d.kv_bytes / t * 1e-9);
}

void time_append(KvStorage s, int64_t tokens, const SweepShape& sh, Arena& arena, RawRun& run) {
  PagedKvView v;
  v.storage = s;
  v.layout = KvLayout::kNHD;
  v.page_size = 16;
  v.num_kv_heads = static_cast<int32_t>(sh.kv_heads);
  v.head_dim = static_cast<int32_t>(sh.head_dim);
  v.group_size = kv_storage_scaled(s) ? kGroup : v.head_dim;
  make_strides(v);
  const int64_t pool_pages = arena.bytes / v.page_bytes();
  const int64_t pool_slots = pool_pages * v.page_size;
  if (tokens > pool_slots) return;
  // Distinct random slots, as a batch of sequences appending into scattered pages does.
  std::vector<int64_t> slots(static_cast<size_t>(tokens));
  UniformSource rng(static_cast<uint64_t>(tokens) * 977);
  for (auto& x : slots) x = static_cast<int64_t>(rng.next_bits() % static_cast<uint64_t>(pool_pages)) * v.page_size;
  for (int64_t i = 0; i < tokens; ++i) slots[static_cast<size_t>(i)] += i % v.page_size;  // distinct up to page collisions
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
    launch_quantize_append(v, QoType::kBF16, kn.get<uint16_t>(), vn.get<uint16_t>(), d_slots.get<int64_t>(), tokens, nullptr);
  };
  const double t = time_median_s(launch, 3, 15, 4);
  const int64_t scale_bytes = kv_storage_scaled(s) ? sh.head_dim / kGroup * 4 : 0;
  RawAppend a;
  a.kv_dtype = kv_storage_name(s);
  a.tokens = tokens;
  a.head_dim = sh.head_dim;
  a.num_kv_heads = sh.kv_heads;
  a.bytes = static_cast<double>(2 * elems * 2 + 2 * tokens * sh.kv_heads * (row_bytes(s, v.head_dim) + scale_bytes));
  a.time_s = t;
  run.append.push_back(a);
  std::printf("append %-8s tokens=%6lld  %9.2f us  %7.1f GB/s\n", a.kv_dtype.c_str(), static_cast<long long>(tokens),
              t * 1e6, a.bytes / t * 1e-9);
}

}  // namespace

void run_kernel_sweep(const HarnessOptions& opt, int sm_count, int64_t l2_bytes, double deadline_s, RawRun& run) {
  const SweepShape& sh = opt.shape;
  const int32_t hd = static_cast<int32_t>(sh.head_dim), hq = static_cast<int32_t>(sh.q_heads),
                hkv = static_cast<int32_t>(sh.kv_heads);
  std::vector<DecodeCase> cases;
  const std::vector<int64_t> batches = opt.quick ? std::vector<int64_t>{1, 32} : std::vector<int64_t>{1, 8, 32, 128};
  const std::vector<int64_t> contexts =
      opt.quick ? std::vector<int64_t>{1024, 16384} : std::vector<int64_t>{256, 1024, 4096, 16384, 65536};
  for (int64_t b : batches)
    for (int64_t ctx : contexts)
      if (b * ctx <= (int64_t{1} << 20)) cases.push_back({b, ctx, 16, hd, hq, hkv});
  // Page size, head_dim and GQA sensitivity around one mid-size point.
  for (int32_t page : {8, 32}) cases.push_back({32, 4096, page, hd, hq, hkv});
  for (int32_t d : {64, 256})
    if (d != hd) cases.push_back({32, 4096, 16, d, hq, hkv});
  for (int32_t g : {1, 4, 16})
    if (g * hkv != hq) cases.push_back({32, 4096, 16, hd, g * hkv, hkv});

  Arena arena;
  arena.bytes = int64_t{3} << 30;  // 3 GiB each for K and V: > 50 × a 60 MB L2
  arena.k = DeviceBuffer(static_cast<size_t>(arena.bytes));
  arena.v = DeviceBuffer(static_cast<size_t>(arena.bytes));
  // Scales: 4 B per 64 elements; int4 (0.5 B/element) needs 1/8 of its data bytes.
  arena.ks = DeviceBuffer(static_cast<size_t>(arena.bytes / 8));
  arena.vs = DeviceBuffer(static_cast<size_t>(arena.bytes / 8));
  for (KvStorage s : kStorages) {
    launch_fill_random(arena.k.get<uint8_t>(), arena.bytes, s, 11, nullptr);
    launch_fill_random(arena.v.get<uint8_t>(), arena.bytes, s, 12, nullptr);
    launch_fill_scales(arena.ks.get<float>(), static_cast<int64_t>(arena.ks.bytes() / 4), 0.001f, 0.02f, 13, nullptr);
    launch_fill_scales(arena.vs.get<float>(), static_cast<int64_t>(arena.vs.bytes() / 4), 0.001f, 0.02f, 14, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (const DecodeCase& c : cases) {
      if (harness_elapsed_s() > deadline_s) {
        std::printf("sweep budget reached: stopping before %s\n", kv_storage_name(s));
        return;
      }
      time_decode(s, c, arena, sm_count, l2_bytes, run);
    }
    for (int64_t tokens : {int64_t{1}, int64_t{64}, int64_t{1024}, int64_t{16384}}) time_append(s, tokens, sh, arena, run);
    std::fflush(stdout);
  }
}

}  // namespace kvcap::kern
