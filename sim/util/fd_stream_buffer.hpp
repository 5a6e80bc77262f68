#pragma once
// A stream buffer that writes to a file descriptor and keeps the first write error's errno, so a
// message can say why a write failed ("No space left on device", "File too large"): std::ofstream
// and stdio only say that it did. Output files (sim/util/atomic_file.hpp) and standard output
// (sim/util/exit_codes.hpp) are written through it.
#include <cstddef>
#include <streambuf>
#include <vector>

namespace kvcap {

class FdStreamBuffer : public std::streambuf {
 public:
  /// Writes to `fd` (not owned: the caller closes it) through a buffer of `capacity` bytes.
  explicit FdStreamBuffer(int fd, size_t capacity = size_t{1} << 16);
  /// errno of the first failed write; 0 while every write succeeded.
  int error() const { return error_; }
  /// Writes out what is buffered; false when a write failed (now or before).
  bool drain();

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  int fd_;
  std::vector<char> data_;
  int error_ = 0;
};

}  // namespace kvcap
