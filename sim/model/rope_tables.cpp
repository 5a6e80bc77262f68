#include "sim/model/rope_tables.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

// No GPU holds a table this large (16 Gi positions; 2^40 elements); a config asking for more is
// refused rather than overflowing the byte count.
constexpr double kMaxPositions = 17179869184.0;
constexpr double kMaxElements = 1099511627776.0;  // 2^40: 4 TiB in fp32, and far inside int64

double factor_of(const JsonObjectReader& p) { return p.get_number_in("factor", 1e-6, 1e6); }

}  // namespace

RopeTable rope_table(const JsonObjectReader* params, int64_t max_position_embeddings, int64_t rotary_dim,
                     bool deepseek_yarn, bool force_mrope, const std::string& max_position_where) {
  double positions = static_cast<double>(max_position_embeddings);
  bool mrope = force_mrope;
  std::string where = max_position_where;
  if (params != nullptr) {
    const JsonObjectReader& p = *params;
    where = p.where();
    const std::string type = p.has_value("rope_type") ? p.get_string("rope_type")
                             : p.has_value("type")    ? p.get_string("type")
                                                      : std::string("default");
    mrope = mrope || p.has_value("mrope_section");
    const double original =
        p.has_value("original_max_position_embeddings")
            ? static_cast<double>(p.get_int("original_max_position_embeddings", 1, int64_t{1} << 40))
            : static_cast<double>(max_position_embeddings);
    if (mrope) {
      positions = 4.0 * positions;
      if (type == "yarn") positions = std::ceil(positions * factor_of(p));
    } else if (type == "linear" || type == "dynamic") {
      positions = positions * factor_of(p);
    } else if (type == "yarn") {
      const double scaled = std::ceil(original * factor_of(p));
      positions = deepseek_yarn ? scaled : std::max(scaled, positions);
    } else if (type == "longrope") {
      positions = original + positions;
    }
    // default, llama3, proportional, mllama4 and types kvcap does not know: max_position_embeddings
    // positions, the base class's table, which every variant holds at least.
  } else if (mrope) {
    positions = 4.0 * positions;
  }
  if (!(positions <= kMaxPositions) || positions * static_cast<double>(rotary_dim) > kMaxElements)
    throw InputError(where, "a RoPE table of " + format_text("%.0f", positions) + " positions x " +
                                std::to_string(rotary_dim) + " (vLLM's cos/sin cache) would not fit any GPU");
  return RopeTable{static_cast<int64_t>(std::floor(positions)), rotary_dim, mrope};
}

double rope_base(const JsonObjectReader& config, const JsonObjectReader* params, const char* key) {
  if (params != nullptr && params->has_value(key)) return params->get_number_in(key, 1e-6, 1e15);
  if (config.has_value(key)) return config.get_number_in(key, 1e-6, 1e15);
  return 10000.0;
}

int64_t rope_table_bytes(const RopeTable& t, DType dtype) { return t.positions * t.rotary_dim * (t.fp32 ? 4 : dtype_bits(dtype) / 8); }

int64_t rope_cache_bytes(const ModelSpec& model, DType dtype) {
  int64_t bytes = 0;
  for (const RopeTable& t : model.rope_tables) bytes += rope_table_bytes(t, dtype);
  return bytes;
}

}  // namespace kvcap
