#pragma once
// JSON form of the raw measurements ("kvcap-raw", documented in kernels/NOTES.md).
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/calibrate/raw_measurements.hpp"

namespace kvcap {

nlohmann::json raw_to_json(const RawRun& r);
/// Strict read; InputError naming `origin` and the field for anything malformed.
RawRun raw_from_json(const nlohmann::json& j, const std::string& origin);

}  // namespace kvcap
