#pragma once
// Text helpers every room needs, kept in one place so each has one definition.
#include <cstdint>
#include <string>

namespace kvcap {

/// ASCII lower case (identifiers, GPU and model names); bytes ≥ 0x80 are left as they are.
std::string ascii_lower(std::string s);

/// One CSV field as RFC 4180 writes it: quoted (with quotes doubled) only when it holds a
/// comma, a quote or a line break.
std::string csv_field(const std::string& s);

/// Bytes as GiB with two decimals and the unit: "12.34 GiB".
std::string gib_text(int64_t bytes);

}  // namespace kvcap
