// Writing the raw measurements with no third-party library, so that kvcap-gpu-calibrate builds
// on a GPU machine with nvcc alone (tools/gpu-check's fallback; the file is written atomically
// through sim/util/atomic_file, which needs only the standard library and POSIX). Reading is in
// raw_json.cpp.
#include "kernels/calibrate/raw_measurements.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/util/atomic_file.hpp"

namespace kvcap {

bool RawRun::checks_passed() const {
  if (checks.empty()) return false;
  for (const auto& c : checks)
    if (!c.passed) return false;
  return true;
}

bool RawRun::baseline_checks_passed() const {
  bool any = false;
  for (const auto& c : checks) {
    if (c.variant != kBaselineVariant) continue;
    any = true;
    if (!c.passed) return false;
  }
  return any;
}

bool RawRun::variant_usable(const std::string& prefix, const std::string& variant, const std::string& dtype) const {
  if (variant == kBaselineVariant) return baseline_checks_passed();
  bool any = false;
  for (const auto& c : checks) {
    if (c.variant != variant) continue;
    // A harness error while checking this variant names no dtype: it disables the variant.
    if (!c.passed && c.kv_dtype.empty()) return false;
    if (c.kv_dtype != dtype || c.kernel.rfind(prefix, 0) != 0) continue;
    any = true;
    if (!c.passed) return false;
  }
  return any;
}

namespace {

std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += ch;
    }
  }
  return o + "\"";
}

std::string num(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN: a reader treats null as a failed value
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
std::string num(int64_t v) { return std::to_string(v); }
std::string num(uint64_t v) { return std::to_string(v); }
std::string boolean(bool b) { return b ? "true" : "false"; }

/// One JSON object on one line, keys in the order given.
class Obj {
 public:
  Obj& s(const char* k, const std::string& v) { return add(k, quote(v)); }
  Obj& n(const char* k, double v) { return add(k, num(v)); }
  Obj& i(const char* k, int64_t v) { return add(k, num(v)); }
  Obj& u(const char* k, uint64_t v) { return add(k, num(v)); }
  Obj& b(const char* k, bool v) { return add(k, boolean(v)); }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  Obj& add(const char* k, const std::string& v) {
    body_ += (body_.empty() ? "" : ", ") + quote(k) + ": " + v;
    return *this;
  }
  std::string body_;
};

template <typename T, typename F>
void array(std::ostream& out, const char* key, const std::vector<T>& items, F&& to_obj, bool last = false) {
  out << "  " << quote(key) << ": [";
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ",\n    " : "\n    ") << to_obj(items[i]).str();
  out << (items.empty() ? "]" : "\n  ]") << (last ? "\n" : ",\n");
}

}  // namespace

void write_raw_file(const RawRun& r, const std::string& path) {
  std::ostringstream out;
  const auto& p = r.provenance;
  out << "{\n  \"format\": \"kvcap-raw\",\n  \"version\": 1,\n  \"provenance\": "
      << Obj()
             .s("gpu_id", p.gpu_id)
             .s("gpu_name", p.gpu_name)
             .i("gpu_memory_bytes", p.gpu_memory_bytes)
             .i("sm_count", p.sm_count)
             .i("l2_bytes", p.l2_bytes)
             .s("driver_version", p.driver_version)
             .s("cuda_runtime_version", p.cuda_runtime_version)
             .s("clocks", p.clocks)
             .s("date_utc", p.date_utc)
             .s("git_commit", p.git_commit)
             .s("command", p.command)
             .u("check_seed", p.check_seed)
             .s("incomplete", p.incomplete)
             .b("synthetic", p.synthetic)
             .str()
      << ",\n";
  array(out, "checks", r.checks, [](const RawCheck& c) {
    return Obj()
        .s("kernel", c.kernel)
        .s("variant", c.variant)
        .s("kv_dtype", c.kv_dtype)
        .s("qo_dtype", c.qo_dtype)
        .i("head_dim", c.head_dim)
        .i("page_size", c.page_size)
        .i("gqa", c.gqa)
        .i("num_kv_heads", c.num_kv_heads)
        .s("layout", c.layout)
        .n("rel_error", c.rel_error)
        .n("bound", c.bound)
        .b("all_written", c.all_written)
        .b("finite", c.finite)
        .b("passed", c.passed);
  });
  array(out, "copy", r.copy, [](const RawCopy& c) { return Obj().i("bytes", c.bytes).n("time_s", c.time_s); });
  array(out, "gemm", r.gemm, [](const RawGemm& g) {
    return Obj().s("name", g.name).s("dtype", g.dtype).i("m", g.m).i("n", g.n).i("k", g.k).n("flops", g.flops)
        .n("bytes", g.bytes).n("time_s", g.time_s);
  });
  array(out, "decode", r.decode, [](const RawDecode& d) {
    return Obj().s("kv_dtype", d.kv_dtype).s("variant", d.variant).i("batch", d.batch).i("context", d.context).i("page_size", d.page_size)
        .i("head_dim", d.head_dim).i("num_q_heads", d.num_q_heads).i("num_kv_heads", d.num_kv_heads)
        .i("splits", d.splits).n("kv_bytes", d.kv_bytes).n("total_bytes", d.total_bytes).n("time_s", d.time_s)
        .i("allocated_bytes_per_token", d.allocated_bytes_per_token).i("block_table_bytes", d.block_table_bytes);
  });
  array(out, "append", r.append, [](const RawAppend& a) {
    return Obj().s("kv_dtype", a.kv_dtype).s("variant", a.variant).i("tokens", a.tokens).i("head_dim", a.head_dim)
        .i("num_kv_heads", a.num_kv_heads).n("bytes", a.bytes).n("time_s", a.time_s);
  }, true);
  out << "}\n";
  write_file_atomically(path, out.str());
}

}  // namespace kvcap
