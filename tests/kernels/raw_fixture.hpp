#pragma once
// A synthetic raw run generated from known rates, so fits can be checked against the truth.
#include "kernels/calibrate/raw_measurements.hpp"

namespace kvcap::test {

struct TrueRates {
  double copy = 4.3e12;
  double gemm_flops = 7.9e14, gemm_bytes = 3.9e12, gemm_launch_s = 6e-6;
  double decode_bf16 = 4.0e12, decode_int8 = 3.5e12, decode_launch_s = 9e-6;
  double append = 3.0e12, append_launch_s = 4e-6;
};

/// GEMMs above and below the H200 ridge (989.5e12 / 4.8e12 ≈ 206 FLOP/B), decode and append
/// points over a decade of sizes, all exactly on the true lines; one passing check per kernel.
inline RawRun synthetic_raw(const TrueRates& t = {}) {
  RawRun r;
  r.provenance.gpu_id = "h200";
  r.provenance.gpu_name = "synthetic (test fixture, not a GPU)";
  r.provenance.date_utc = "2026-01-01T00:00:00Z";
  r.provenance.command = "test";
  for (const char* k : {"quantize_append", "paged_decode", "paged_decode_split"}) {
    RawCheck c;
    c.kernel = k;
    c.kv_dtype = "bf16";
    c.qo_dtype = "bf16";
    c.rel_error = 1e-3;
    c.bound = 5e-3;
    c.all_written = c.finite = c.passed = true;
    r.checks.push_back(c);
  }
  r.copy.push_back({int64_t{4} << 30, static_cast<double>(int64_t{4} << 30) / t.copy});
  for (int64_t m : {1, 8, 32, 128, 2048, 4096, 8192}) {
    RawGemm g;
    g.name = "o";
    g.dtype = "bf16";
    g.m = m;
    g.n = 4096;
    g.k = 4096;
    g.flops = 2.0 * m * 4096 * 4096;
    g.bytes = 2.0 * (4096.0 * 4096 + 2.0 * m * 4096);
    const bool compute = g.flops / g.bytes > 989.5e12 / 4.8e12;
    g.time_s = t.gemm_launch_s + (compute ? g.flops / t.gemm_flops : g.bytes / t.gemm_bytes);
    r.gemm.push_back(g);
  }
  for (const char* dt : {"bf16", "int8"}) {
    const double rate = std::string(dt) == "bf16" ? t.decode_bf16 : t.decode_int8;
    for (int64_t ctx : {1024, 4096, 16384, 65536}) {
      RawDecode d;
      d.kv_dtype = dt;
      d.batch = 8;
      d.context = ctx;
      d.page_size = 16;
      d.head_dim = 128;
      d.num_q_heads = 32;
      d.num_kv_heads = 8;
      d.kv_bytes = 8.0 * ctx * 4096;
      d.total_bytes = d.kv_bytes;
      d.time_s = t.decode_launch_s + d.kv_bytes / rate;
      d.allocated_bytes_per_token = 4096;
      d.block_table_bytes = 4 * (8 * ctx / 16 + 17);
      r.decode.push_back(d);
    }
    for (int64_t tokens : {64, 1024, 16384}) {
      RawAppend a;
      a.kv_dtype = dt;
      a.tokens = tokens;
      a.head_dim = 128;
      a.num_kv_heads = 8;
      a.bytes = tokens * 8192.0;
      a.time_s = t.append_launch_s + a.bytes / t.append;
      r.append.push_back(a);
    }
  }
  return r;
}

}  // namespace kvcap::test
