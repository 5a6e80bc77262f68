#pragma once
// Writes a request stream as a trace file (plain, or gzip when the name ends in ".gz"), in any
// format the readers accept, so `trace convert` and `trace generate` round-trip:
//   jsonl    kvcap's own: id, arrival_s, lengths, class, priority, session, content segments
//   csv      kvcap's own without content (arrival_s, prompt_tokens, output_tokens, class, ...)
//   mooncake timestamp (ms, rounded), hash_ids: 512-token blocks (content ids when the content
//            is already block-aligned, else prefix-chained hashes, so sharing is preserved)
//   azure    TIMESTAMP wall clock from 2000-01-01 00:00:00 (an arbitrary origin) + arrival_s
//   lengths  num_prefill_tokens, num_decode_tokens, num_total_tokens, pd_ratio (no times)
// Numbers are printed in shortest round-trip form: same stream, same bytes.
// The file is an AtomicFile (sim/util/atomic_file.hpp): it appears, complete, at close(); a
// writer destroyed before close() (an error, a closed-loop workload) leaves the target as it was.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/util/atomic_file.hpp"
#include "workloads/readers/trace_reader.hpp"

namespace kvcap {

class TraceWriter {
 public:
  TraceWriter(const std::string& path, TraceFormat format);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  void write(const Request& r);
  /// Flushes, closes and puts the file in place; InputError when the disk refused the data.
  void close();

 private:
  void put(const std::string& s);
  std::string gz_reason() const;
  std::string path_;
  TraceFormat format_;
  std::unique_ptr<AtomicFile> file_;
  void* gz_ = nullptr;
  std::string line_;
};

/// Mooncake-style 512-token block ids for a request's prompt (see the header comment).
std::vector<uint64_t> block_hash_ids(const Request& r, int64_t block_tokens);

}  // namespace kvcap
