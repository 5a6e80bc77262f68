#pragma once
// Opening input files that must be regular files. A path in a scenario or on the command line
// can name anything: a directory, /dev/zero (endless), a FIFO (blocks until a writer comes), a
// terminal. Readers expect a file with an end, so such paths are refused up front, by kind,
// without reading a byte of them.
#include <string>

namespace kvcap {

/// Refuses `path` unless it names a regular file (links followed). InputError at `where` (the
/// field or flag that gave the path; the path itself when empty), e.g. "trace file '/dev/zero'
/// is a character device; expected a regular file". `what` names the file's role.
void require_regular_file(const std::string& path, const std::string& where, const std::string& what);

/// Opens `path` for reading after the same check, and checks that what was opened is still
/// that regular file (not swapped for a FIFO in between). Returns a descriptor the caller owns.
int open_regular_file(const std::string& path, const std::string& where, const std::string& what);

/// The whole content of a regular file.
std::string read_regular_file(const std::string& path, const std::string& where, const std::string& what);

}  // namespace kvcap
