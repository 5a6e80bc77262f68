// The one libFuzzer executable's dispatch (fuzz/harnesses.hpp): the harness is the name it was
// started under (build-fuzz/fuzz_trace_azure -> trace_azure), or KVCAP_FUZZ_HARNESS when set.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz/harnesses.hpp"

using namespace kvcap::fuzz;

namespace {

struct Harness {
  const char* name;
  int (*input)(const uint8_t*, size_t);
  void (*setup)();
};

// Keep in step with fuzz/harnesses.txt (the build's links and tools/fuzz read that list; CI's fuzz
// run starts every name there, and a name missing here exits 2).
constexpr Harness kHarnesses[] = {
    {"scenario", scenario_input, scenario_setup},
    {"hf_config", [](const uint8_t* d, size_t n) { return hf_config_input(false, d, n); }, nullptr},
    {"model_memory", [](const uint8_t* d, size_t n) { return hf_config_input(true, d, n); }, nullptr},
    {"drafter_config", drafter_config_input, nullptr},
    {"trace_azure", [](const uint8_t* d, size_t n) { return trace_input("azure", d, n); }, nullptr},
    {"trace_burstgpt", [](const uint8_t* d, size_t n) { return trace_input("burstgpt", d, n); }, nullptr},
    {"trace_mooncake", [](const uint8_t* d, size_t n) { return trace_input("mooncake", d, n); }, nullptr},
    {"trace_lengths", [](const uint8_t* d, size_t n) { return trace_input("lengths", d, n); }, nullptr},
    {"trace_csv", [](const uint8_t* d, size_t n) { return trace_input("csv", d, n); }, nullptr},
    {"trace_jsonl", [](const uint8_t* d, size_t n) { return trace_input("jsonl", d, n); }, nullptr},
    {"trace_detect", [](const uint8_t* d, size_t n) { return trace_input("detect", d, n); }, nullptr},
    {"kernel_profile", [](const uint8_t* d, size_t n) { return json_reader_input("kernel_profile", d, n); }, nullptr},
    {"raw_measurements", [](const uint8_t* d, size_t n) { return json_reader_input("raw_measurements", d, n); }, nullptr},
    {"engine_profile", [](const uint8_t* d, size_t n) { return json_reader_input("engine_profile", d, n); }, nullptr},
    {"gpu", [](const uint8_t* d, size_t n) { return json_reader_input("gpu", d, n); }, nullptr},
    {"serving_runs", [](const uint8_t* d, size_t n) { return file_reader_input("serving_runs", d, n); }, nullptr},
    {"startup_logs", [](const uint8_t* d, size_t n) { return file_reader_input("startup_logs", d, n); }, nullptr},
    {"bench_serve", [](const uint8_t* d, size_t n) { return file_reader_input("bench_serve", d, n); }, nullptr},
    {"baseline", [](const uint8_t* d, size_t n) { return file_reader_input("baseline", d, n); }, nullptr},
    {"sweep_shard", [](const uint8_t* d, size_t n) { return shard_reader_input("sweep_shard", d, n); }, nullptr},
    {"search_shard", [](const uint8_t* d, size_t n) { return shard_reader_input("search_shard", d, n); }, nullptr},
    {"sweep_journal", [](const uint8_t* d, size_t n) { return shard_reader_input("sweep_journal", d, n); }, nullptr},
    {"search_journal", [](const uint8_t* d, size_t n) { return shard_reader_input("search_journal", d, n); }, nullptr},
};

const Harness* g_harness = nullptr;

const Harness* find_harness(std::string_view name) {
  for (const Harness& h : kHarnesses)
    if (name == h.name) return &h;
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string_view name;
  if (const char* env = std::getenv("KVCAP_FUZZ_HARNESS"); env && *env) {
    name = env;
  } else if (*argc > 0) {
    name = (*argv)[0];
    if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    if (name.starts_with("fuzz_")) name.remove_prefix(5);
  }
  g_harness = find_harness(name);
  if (!g_harness) {
    std::fprintf(stderr, "fuzz_kvcap: no harness named '%.*s': start it as fuzz_<harness> (the links the build makes) "
                 "or set KVCAP_FUZZ_HARNESS to one of:", static_cast<int>(name.size()), name.data());
    for (const Harness& h : kHarnesses) std::fprintf(stderr, " %s", h.name);
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  if (g_harness->setup) g_harness->setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return g_harness->input(data, size); }
