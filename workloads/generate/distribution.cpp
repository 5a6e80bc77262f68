#include "workloads/generate/distribution.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/readers/trace_reader.hpp"
#include "workloads/request.hpp"

namespace kvcap {

Distribution Distribution::fixed(double v) {
  Distribution d;
  d.kind = Kind::fixed;
  d.a = v;
  return d;
}

namespace {
std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

// A trace's two length columns, read once: a workload's prompt and output distributions usually
// resample the same file (the 1M benchmark read its trace twice, about 20 ms each), and a sweep
// or a search builds every point's workload again. Keyed by path, format, size and a hash of the
// file's bytes (hashing costs a small part of parsing; file times are too coarse to tell two
// writes a millisecond apart), so that a rewritten file is read again; a few files only, the most
// recent kept.
struct TraceLengths {
  std::shared_ptr<const std::vector<int64_t>> prompt, output;
};

// FNV-1a over a file's bytes into `h`; false if it cannot be read (the reader then says why).
bool file_content_hash(const std::string& path, uint64_t& hash) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  uint64_t h = 14695981039346656037ull;  // FNV-1a offset basis
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv1a_extend(h, {buf.data(), static_cast<size_t>(in.gcount())});
  }
  hash = h;
  return !in.bad();
}

TraceLengths read_trace_lengths(const TraceReadOptions& o) {
  struct Entry {
    std::string path;
    TraceFormat format;
    std::uintmax_t size;
    uint64_t content_hash;
    TraceLengths lengths;
  };
  static std::mutex mutex;
  static std::deque<Entry> cache;
  constexpr size_t kFiles = 4;
  // Only a regular file: a pipe's bytes would be consumed by the hash.
  std::error_code error;
  const bool regular = std::filesystem::is_regular_file(o.path, error) && !error;
  const std::uintmax_t size = regular ? std::filesystem::file_size(o.path, error) : 0;
  uint64_t hash = 0;
  const bool cacheable = regular && !error && file_content_hash(o.path, hash);
  auto same_file = [&](const Entry& e) {
    return e.path == o.path && e.format == o.format && e.size == size && e.content_hash == hash;
  };
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& e : cache)
      if (same_file(e)) return e.lengths;
  }
  auto prompt = std::make_shared<std::vector<int64_t>>();
  auto output = std::make_shared<std::vector<int64_t>>();
  auto reader = open_trace_reader(o);
  Request q;
  while (reader->next(q)) {
    prompt->push_back(q.prompt_tokens);
    output->push_back(q.output_tokens);
  }
  TraceLengths lengths{std::move(prompt), std::move(output)};
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mutex);
    cache.push_back({o.path, o.format, size, hash, lengths});
    if (cache.size() > kFiles) cache.pop_front();
  }
  return lengths;
}
}  // namespace

Distribution Distribution::parse(const nlohmann::json& j, const std::string& file,
                                 const std::string& pointer, const std::string& base_dir) {
  if (j.is_number()) {
    double v = j.get<double>();
    if (!std::isfinite(v) || v < 0)
      throw InputError(file + ": " + pointer, "expected a non-negative number or a distribution object");
    return fixed(v);
  }
  JsonObjectReader r(j, file, pointer);
  const std::string kind = r.get_string("dist");
  Distribution d;
  auto clamps = [&] {
    d.lo = r.get_number_in("min", 0, 1e12, 0);
    d.hi = r.get_number_in("max", 0, 1e12, 1e12);
    if (d.lo > d.hi) throw InputError(r.where("min"), "min must not exceed max");
  };
  if (kind == "fixed") {
    r.reject_unknown({"dist", "value"});
    d.a = r.get_number_in("value", 0, 1e12);
  } else if (kind == "uniform") {
    r.reject_unknown({"dist", "min", "max"});
    d.kind = Kind::uniform;
    d.a = r.get_number_in("min", 0, 1e12);
    d.b = r.get_number_in("max", d.a, 1e12);
  } else if (kind == "normal") {
    r.reject_unknown({"dist", "mean", "std", "min", "max"});
    d.kind = Kind::normal;
    d.a = r.get_number_in("mean", 0, 1e12);
    d.b = r.get_number_in("std", 0, 1e12);
    clamps();
  } else if (kind == "lognormal") {
    r.reject_unknown({"dist", "mean", "cv", "min", "max"});
    d.kind = Kind::lognormal;
    double mean = r.get_number_in("mean", 1e-9, 1e12);
    double cv = r.get_number_in("cv", 0, 100);
    d.b = std::sqrt(std::log1p(cv * cv));
    d.a = std::log(mean) - 0.5 * d.b * d.b;
    clamps();
  } else if (kind == "exponential") {
    r.reject_unknown({"dist", "mean", "min", "max"});
    d.kind = Kind::exponential;
    d.a = r.get_number_in("mean", 1e-12, 1e12);
    clamps();
  } else if (kind == "zipf") {
    r.reject_unknown({"dist", "min", "max", "exponent"});
    d.kind = Kind::zipf;
    d.a = static_cast<double>(r.get_int("min", 0, int64_t{1} << 40));
    auto mx = r.get_int("max", static_cast<int64_t>(d.a), static_cast<int64_t>(d.a) + 10000000 - 1);
    double s = r.get_number_in("exponent", 0, 20);
    d.zipf = std::make_shared<const ZipfTable>(mx - static_cast<int64_t>(d.a) + 1, s);
  } else if (kind == "empirical") {
    r.reject_unknown({"dist", "path", "field", "format", "min", "max"});
    d.kind = Kind::empirical;
    clamps();
    TraceReadOptions o;
    o.path = resolve(base_dir, r.get_string("path"));
    o.format = r.has("format") ? trace_format_from_name(r.get_string("format"), r.where("format"))
                               : detect_trace_format(o.path);
    const std::string field = r.get_string("field");
    if (field != "prompt" && field != "output")
      throw InputError(r.where("field"), "expected 'prompt' or 'output', got " + quote_input(field));
    const TraceLengths lengths = read_trace_lengths(o);
    d.values = field == "prompt" ? lengths.prompt : lengths.output;
    if (d.values->empty()) throw InputError(r.where("path"), "trace has no rows to resample");
  } else {
    throw InputError(r.where("dist"), "unknown distribution " + quote_input(kind) +
                                          " (expected fixed, uniform, normal, lognormal, "
                                          "exponential, zipf or empirical)");
  }
  return d;
}

double Distribution::sample(Rng& rng) const {
  double v = 0;
  switch (kind) {
    case Kind::fixed: return a;
    case Kind::uniform: return a + (b - a) * rng.uniform01();
    case Kind::normal: v = a + b * sample_standard_normal(rng); break;
    case Kind::lognormal: v = std::exp(a + b * sample_standard_normal(rng)); break;
    case Kind::exponential: v = sample_exponential(rng, a); break;
    case Kind::zipf: return a + static_cast<double>(zipf->sample(rng) - 1);
    case Kind::empirical: v = static_cast<double>((*values)[rng.below(values->size())]); break;
  }
  return std::clamp(v, lo, hi);
}

bool Distribution::prefetch_next(Rng& peek) const {
  if (kind != Kind::empirical) return false;
  __builtin_prefetch(values->data() + peek.below(values->size()));
  return true;
}

int64_t Distribution::sample_tokens(Rng& rng) const {
  if (kind == Kind::uniform) {  // every whole number in [a, b] equally likely
    auto lo_i = std::llround(std::ceil(a)), hi_i = std::llround(std::floor(b));
    if (hi_i < lo_i) return std::max<int64_t>(1, std::llround(a));
    return std::max<int64_t>(1, lo_i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(hi_i - lo_i + 1))));
  }
  return std::max<int64_t>(1, std::llround(sample(rng)));
}

double Distribution::nominal_mean() const {
  switch (kind) {
    case Kind::fixed: return a;
    case Kind::uniform: return 0.5 * (a + b);
    case Kind::normal: return a;
    case Kind::lognormal: return std::exp(a + 0.5 * b * b);
    case Kind::exponential: return a;
    case Kind::zipf: return a + zipf->mean() - 1;
    case Kind::empirical: {
      double s = 0;
      for (auto x : *values) s += static_cast<double>(x);
      return s / static_cast<double>(values->size());
    }
  }
  return 0;
}

}  // namespace kvcap
