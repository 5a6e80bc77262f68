#include "workloads/request.hpp"

namespace kvcap {

uint64_t fnv1a_extend(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;  // FNV prime
  }
  return h;
}

uint64_t content_id_hash(const std::string& s) {
  // (One digit short of FNV's offset basis, 14695981039346656037: kept, since every content id a
  // run has reported was made with it.)
  return fnv1a_extend(1469598103934665603ull, s);
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
