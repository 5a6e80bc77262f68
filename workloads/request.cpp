#include "workloads/request.hpp"

namespace kvcap {

uint64_t content_id_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;  // FNV prime
  }
  return h;
}

WorkloadCounts& WorkloadCounts::operator+=(const WorkloadCounts& o) {
  rows_read += o.rows_read;
  bad_rows_skipped += o.bad_rows_skipped;
  failed_in_trace += o.failed_in_trace;
  filtered_out += o.filtered_out;
  rejected_too_long += o.rejected_too_long;
  truncated += o.truncated;
  emitted += o.emitted;
  return *this;
}

}  // namespace kvcap
