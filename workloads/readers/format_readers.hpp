#pragma once
// Constructors of the per-format readers (one translation unit per family).
#include <memory>

#include "workloads/readers/trace_reader.hpp"

namespace kvcap {

std::unique_ptr<TraceReader> make_azure_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o);
std::unique_ptr<TraceReader> make_burstgpt_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o);
std::unique_ptr<TraceReader> make_lengths_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o);
std::unique_ptr<TraceReader> make_csv_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o);
std::unique_ptr<TraceReader> make_mooncake_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o);
std::unique_ptr<TraceReader> make_jsonl_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o);

/// Nanoseconds per unit of "s"/"ms"/"us"/"ns"; 0 for "wall_clock". InputError otherwise.
double time_unit_ns(const std::string& unit);

}  // namespace kvcap
