#include "kernels/calibrate/raw_json.hpp"

#include <fstream>

#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

nlohmann::json raw_to_json(const RawRun& r) {
  nlohmann::json j;
  j["format"] = "kvcap-raw";
  j["version"] = 1;
  const auto& p = r.provenance;
  j["provenance"] = {{"gpu_id", p.gpu_id},
                     {"gpu_name", p.gpu_name},
                     {"gpu_memory_bytes", p.gpu_memory_bytes},
                     {"sm_count", p.sm_count},
                     {"l2_bytes", p.l2_bytes},
                     {"driver_version", p.driver_version},
                     {"cuda_runtime_version", p.cuda_runtime_version},
                     {"clocks", p.clocks},
                     {"date_utc", p.date_utc},
                     {"git_commit", p.git_commit},
                     {"command", p.command},
                     {"check_seed", p.check_seed},
                     {"incomplete", p.incomplete},
                     {"synthetic", p.synthetic}};
  j["checks"] = nlohmann::json::array();
  for (const auto& c : r.checks)
    j["checks"].push_back({{"kernel", c.kernel}, {"variant", c.variant}, {"kv_dtype", c.kv_dtype}, {"qo_dtype", c.qo_dtype},
                           {"head_dim", c.head_dim}, {"page_size", c.page_size}, {"gqa", c.gqa},
                           {"num_kv_heads", c.num_kv_heads}, {"layout", c.layout}, {"rel_error", c.rel_error},
                           {"bound", c.bound}, {"all_written", c.all_written}, {"finite", c.finite},
                           {"passed", c.passed}});
  j["copy"] = nlohmann::json::array();
  for (const auto& c : r.copy) j["copy"].push_back({{"bytes", c.bytes}, {"time_s", c.time_s}});
  j["gemm"] = nlohmann::json::array();
  for (const auto& g : r.gemm)
    j["gemm"].push_back({{"name", g.name}, {"dtype", g.dtype}, {"m", g.m}, {"n", g.n}, {"k", g.k},
                         {"flops", g.flops}, {"bytes", g.bytes}, {"time_s", g.time_s}});
  j["decode"] = nlohmann::json::array();
  for (const auto& d : r.decode)
    j["decode"].push_back({{"kv_dtype", d.kv_dtype}, {"variant", d.variant}, {"batch", d.batch}, {"context", d.context},
                           {"page_size", d.page_size}, {"head_dim", d.head_dim}, {"num_q_heads", d.num_q_heads},
                           {"num_kv_heads", d.num_kv_heads}, {"splits", d.splits}, {"kv_bytes", d.kv_bytes},
                           {"total_bytes", d.total_bytes}, {"time_s", d.time_s},
                           {"allocated_bytes_per_token", d.allocated_bytes_per_token},
                           {"block_table_bytes", d.block_table_bytes}});
  j["append"] = nlohmann::json::array();
  for (const auto& a : r.append)
    j["append"].push_back({{"kv_dtype", a.kv_dtype}, {"variant", a.variant}, {"tokens", a.tokens}, {"head_dim", a.head_dim},
                           {"num_kv_heads", a.num_kv_heads}, {"bytes", a.bytes}, {"time_s", a.time_s}});
  return j;
}

namespace {

const nlohmann::json& array_field(const JsonObjectReader& r, const char* key) {
  if (!r.has(key)) throw InputError(r.where(key), "missing (expected an array)");
  const auto& a = r.raw(key);
  if (!a.is_array()) throw InputError(r.where(key), "expected an array");
  return a;
}

template <typename F>
void each_object(const JsonObjectReader& r, const char* key, F&& f) {
  const auto& a = array_field(r, key);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string ptr = r.pointer() + "/" + key + "/" + std::to_string(i);
    if (!a[i].is_object()) throw InputError(r.file() + ": " + ptr, "expected an object");
    f(JsonObjectReader(a[i], r.file(), ptr));
  }
}

constexpr double kBig = 1e30;

/// Absent in raw files written before variants existed: those timed only the baseline.
std::string variant_field(const JsonObjectReader& o) {
  if (!o.has("variant")) return kBaselineVariant;
  std::string v = o.get_string("variant");
  if (v.empty()) throw InputError(o.where("variant"), "must name a kernel variant (\"baseline\", \"vec\")");
  return v;
}

}  // namespace

RawRun raw_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin, "raw measurements must be a JSON object");
  JsonObjectReader r(j, origin, "");
  r.reject_unknown({"format", "version", "provenance", "checks", "copy", "gemm", "decode", "append"});
  if (r.get_string("format") != "kvcap-raw") throw InputError(r.where("format"), "expected \"kvcap-raw\"");
  r.get_int("version", 1, 1);
  RawRun run;
  {
    auto p = r.object("provenance");
    p.reject_unknown({"gpu_id", "gpu_name", "gpu_memory_bytes", "sm_count", "l2_bytes", "driver_version",
                      "cuda_runtime_version", "clocks", "date_utc", "git_commit", "command", "check_seed",
                      "incomplete", "synthetic"});
    auto& v = run.provenance;
    v.gpu_id = p.get_string("gpu_id");
    if (v.gpu_id.empty()) throw InputError(p.where("gpu_id"), "must name the kvcap GPU id");
    v.gpu_name = p.get_string("gpu_name");
    v.gpu_memory_bytes = p.get_int("gpu_memory_bytes", 0, int64_t{1} << 50);
    v.sm_count = p.get_int("sm_count", 0, 100000);
    v.l2_bytes = p.get_int("l2_bytes", 0, int64_t{1} << 40);
    v.driver_version = p.get_string("driver_version");
    v.cuda_runtime_version = p.get_string("cuda_runtime_version");
    v.clocks = p.get_string("clocks");
    v.date_utc = p.get_string("date_utc");
    v.git_commit = p.get_string("git_commit");
    v.command = p.get_string("command");
    v.check_seed = static_cast<uint64_t>(p.get_number_in("check_seed", 0, 1.9e19));
    // Both absent from raw files written before they existed: those runs were complete, measured.
    if (p.has("incomplete")) v.incomplete = p.get_string("incomplete");
    if (p.has("synthetic")) v.synthetic = p.get_bool("synthetic");
  }
  each_object(r, "checks", [&](const JsonObjectReader& o) {
    o.reject_unknown({"kernel", "variant", "kv_dtype", "qo_dtype", "head_dim", "page_size", "gqa", "num_kv_heads", "layout",
                      "rel_error", "bound", "all_written", "finite", "passed"});
    RawCheck c;
    c.kernel = o.get_string("kernel");
    c.variant = variant_field(o);
    c.kv_dtype = o.get_string("kv_dtype");
    c.qo_dtype = o.get_string("qo_dtype");
    c.head_dim = o.get_int("head_dim", 0, 4096);
    c.page_size = o.get_int("page_size", 0, 4096);
    c.gqa = o.get_int("gqa", 0, 1024);
    c.num_kv_heads = o.get_int("num_kv_heads", 0, 1024);
    c.layout = o.get_string("layout");
    // NaN is written as null by the JSON library: a check with a NaN error is a failed check.
    c.rel_error = o.raw("rel_error").is_number() ? o.get_number("rel_error") : kBig;
    c.bound = o.get_number_in("bound", 0, kBig);
    c.all_written = o.get_bool("all_written");
    c.finite = o.get_bool("finite");
    c.passed = o.get_bool("passed");
    run.checks.push_back(c);
  });
  each_object(r, "copy", [&](const JsonObjectReader& o) {
    o.reject_unknown({"bytes", "time_s"});
    run.copy.push_back({o.get_int("bytes", 1, int64_t{1} << 50), o.get_number_in("time_s", 1e-9, 1e3)});
  });
  each_object(r, "gemm", [&](const JsonObjectReader& o) {
    o.reject_unknown({"name", "dtype", "m", "n", "k", "flops", "bytes", "time_s"});
    RawGemm g;
    g.name = o.get_string("name");
    g.dtype = o.get_string("dtype");
    if (g.dtype != "bf16" && g.dtype != "fp8_e4m3") throw InputError(o.where("dtype"), "expected bf16 or fp8_e4m3");
    g.m = o.get_int("m", 1, int64_t{1} << 30);
    g.n = o.get_int("n", 1, int64_t{1} << 30);
    g.k = o.get_int("k", 1, int64_t{1} << 30);
    g.flops = o.get_number_in("flops", 1, kBig);
    g.bytes = o.get_number_in("bytes", 1, kBig);
    g.time_s = o.get_number_in("time_s", 1e-9, 1e3);
    run.gemm.push_back(g);
  });
  each_object(r, "decode", [&](const JsonObjectReader& o) {
    o.reject_unknown({"kv_dtype", "variant", "batch", "context", "page_size", "head_dim", "num_q_heads", "num_kv_heads", "splits",
                      "kv_bytes", "total_bytes", "time_s", "allocated_bytes_per_token", "block_table_bytes"});
    RawDecode d;
    d.kv_dtype = o.get_string("kv_dtype");
    d.variant = variant_field(o);
    d.batch = o.get_int("batch", 1, 1 << 20);
    d.context = o.get_int("context", 1, int64_t{1} << 32);
    d.page_size = o.get_int("page_size", 1, 4096);
    d.head_dim = o.get_int("head_dim", 1, 4096);
    d.num_q_heads = o.get_int("num_q_heads", 1, 4096);
    d.num_kv_heads = o.get_int("num_kv_heads", 1, 4096);
    d.splits = o.get_int("splits", 1, 1 << 20);
    d.kv_bytes = o.get_number_in("kv_bytes", 1, kBig);
    d.total_bytes = o.get_number_in("total_bytes", 1, kBig);
    d.time_s = o.get_number_in("time_s", 1e-9, 1e3);
    d.allocated_bytes_per_token = o.get_int("allocated_bytes_per_token", 1, int64_t{1} << 40);
    d.block_table_bytes = o.get_int("block_table_bytes", 0, int64_t{1} << 40);
    run.decode.push_back(d);
  });
  each_object(r, "append", [&](const JsonObjectReader& o) {
    o.reject_unknown({"kv_dtype", "variant", "tokens", "head_dim", "num_kv_heads", "bytes", "time_s"});
    RawAppend a;
    a.kv_dtype = o.get_string("kv_dtype");
    a.variant = variant_field(o);
    a.tokens = o.get_int("tokens", 1, int64_t{1} << 32);
    a.head_dim = o.get_int("head_dim", 1, 4096);
    a.num_kv_heads = o.get_int("num_kv_heads", 1, 4096);
    a.bytes = o.get_number_in("bytes", 1, kBig);
    a.time_s = o.get_number_in("time_s", 1e-9, 1e3);
    run.append.push_back(a);
  });
  return run;
}

RawRun read_raw_file(const std::string& path) { return raw_from_json(read_json_file(path), path); }

}  // namespace kvcap
