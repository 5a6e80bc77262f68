// `trace stats` figures of the real traces (the gzipped copies in scenarios/traces, byte-identical
// to ../shared/traces) against the numbers published in ../shared/traces/SOURCES.md (computed there independently with python3 stdlib, percentiles
// linear-interpolated). Every tolerance is half a unit of the last digit SOURCES.md prints, i.e.
// exactly its rounding: our value must round to the published one.
#include <doctest/doctest.h>

#include <filesystem>

#include "workloads/readers/trace_reader.hpp"
#include "workloads/stats/trace_stats.hpp"

using namespace kvcap;

namespace {

struct Published {
  const char* file;
  int64_t rows;
  double span_s, span_tol;  // span_s < 0: length-only
  double rate, in_mean, in_p50, in_p99;
  int64_t in_max;
  double out_mean, out_p50, out_p99;
  int64_t out_max;
  double reuse, blocks_per_req;  // < 0: no content
};

// Copied from SOURCES.md's table and its "Checks" paragraph.
const Published kPublished[] = {
    {"AzureLLMInferenceTrace_code.csv", 8819, 3435.9, 0.05, 2.57, 2047.8, 1469, 7436, 7437, 27.9, 13, 251, 1899, -1, -1},
    {"AzureLLMInferenceTrace_conv.csv", 19366, 3501.7, 0.05, 5.53, 1154.7, 1020, 4142, 14050, 211.1, 129, 601, 1000, -1, -1},
    // SOURCES.md prints "0 -> 3,537,000 ms = 3,537 s"; the last row's timestamp is 3,536,999 ms.
    {"mooncake_conversation_trace.jsonl", 12031, 3537, 0.5, 3.40, 12035.1, 6909, 85400, 126195, 342.6, 350, 1119, 2000, 0.366, 24.0},
    {"mooncake_synthetic_trace.jsonl", 3993, 1022, 0.5, 3.91, 15325.5, 11587, 66456, 191378, 149.1, 69, 768, 893, 0.640, 30.5},
    {"vidur_arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", 28257, -1, 0, 0, 2588.1, 2730, 3933, 4054, 291.4, 167, 3271, 4056, -1, -1},
    {"sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv", 30731, -1, 0, 0, 2340.0, 1730, 7434, 8141, 438.7, 415, 998, 1024, -1, -1},
};

}  // namespace

TEST_CASE("trace stats reproduce the SOURCES.md figures of every shared trace") {
  const std::filesystem::path dir = std::filesystem::path(KVCAP_SOURCE_DIR) / "scenarios" / "traces";
  for (const auto& p : kPublished) {
    CAPTURE(p.file);
    TraceReadOptions o;
    o.path = (dir / (std::string(p.file) + ".gz")).string();
    o.format = detect_trace_format(o.path);
    auto reader = open_trace_reader(o);
    TraceStats s = compute_trace_stats(*reader, reader->has_timestamps());
    CHECK(s.requests == p.rows);
    CHECK(s.counts.bad_rows_skipped == 0);
    if (p.span_s >= 0) {
      CHECK(std::abs(s.duration_s - p.span_s) <= p.span_tol);
      CHECK(std::abs(s.mean_rate_per_s - p.rate) <= 0.005);
    } else {
      CHECK_FALSE(s.has_timestamps);
    }
    CHECK(std::abs(s.input_tokens.mean - p.in_mean) <= 0.05);
    CHECK(std::abs(s.input_tokens.p50 - p.in_p50) <= 0.5);
    CHECK(std::abs(s.input_tokens.p99 - p.in_p99) <= 0.5);
    CHECK(s.input_tokens.max == p.in_max);
    CHECK(std::abs(s.output_tokens.mean - p.out_mean) <= 0.05);
    CHECK(std::abs(s.output_tokens.p50 - p.out_p50) <= 0.5);
    CHECK(std::abs(s.output_tokens.p99 - p.out_p99) <= 0.5);
    CHECK(s.output_tokens.max == p.out_max);
    if (p.reuse >= 0) {
      REQUIRE(s.has_content);
      CHECK(std::abs(s.prefix_reuse_fraction - p.reuse) <= 0.0005);
      CHECK(std::abs(s.mean_segments_per_request - p.blocks_per_req) <= 0.05);
    } else {
      CHECK_FALSE(s.has_content);
    }
  }
}

TEST_CASE("percentiles interpolate linearly at q*(n-1), as numpy/python 'inclusive' do") {
  // [10, 20, 30, 40]: p50 at position 1.5 -> 25; p90 at 2.7 -> 37; p99 at 2.97 -> 39.7.
  std::vector<int64_t> v = {10, 20, 30, 40};
  CHECK(percentile_sorted(v, 0.5) == doctest::Approx(25));
  CHECK(percentile_sorted(v, 0.9) == doctest::Approx(37));
  CHECK(percentile_sorted(v, 0.99) == doctest::Approx(39.7));
  CHECK(percentile_sorted({7}, 0.99) == 7);
}
