#pragma once
// The harnesses' entry points, one per reader family (fuzz_*.cpp). fuzz_main.cpp links them all
// into one libFuzzer executable and picks one by the name it was started under: fuzz_<harness>,
// a link to fuzz_kvcap that fuzz/CMakeLists.txt makes for every name in fuzz/harnesses.txt. One
// executable instead of one per harness: 22 fewer sanitizer links and 16 fewer compiles of the
// same sources in every CI run.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvcap::fuzz {

void scenario_setup();
int scenario_input(const uint8_t* data, size_t size);
/// price_memory: the model_memory harness (the whole budget after the reader), else hf_config.
int hf_config_input(bool price_memory, const uint8_t* data, size_t size);
int drafter_config_input(const uint8_t* data, size_t size);
/// format: a trace format name, or "detect".
int trace_input(std::string_view format, const uint8_t* data, size_t size);
/// reader: kernel_profile, raw_measurements, engine_profile or gpu.
int json_reader_input(std::string_view reader, const uint8_t* data, size_t size);
/// reader: serving_runs, startup_logs, bench_serve or baseline.
int file_reader_input(std::string_view reader, const uint8_t* data, size_t size);
/// reader: sweep_shard, search_shard, sweep_journal or search_journal.
int shard_reader_input(std::string_view reader, const uint8_t* data, size_t size);

}  // namespace kvcap::fuzz
