#include "sim/cli/quick_scenario.hpp"

#include <cmath>
#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

struct Dataset {
  const char* name;
  const char* path;    ///< under data_dir
  const char* format;  ///< trace format
  bool timestamps;     ///< the trace has arrival times
  const char* about;
};

// scenarios/traces/README.md gives each file's source and licence.
constexpr Dataset kDatasets[] = {
    {"sharegpt", "traces/sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv.gz", "lengths", false,
     "ShareGPT conversations filtered to 8k tokens (microsoft/sarathi-serve)"},
    {"azure-conv", "traces/AzureLLMInferenceTrace_conv.csv.gz", "azure", true,
     "Azure LLM inference trace 2023, conversation"},
    {"azure-code", "traces/AzureLLMInferenceTrace_code.csv.gz", "azure", true, "Azure LLM inference trace 2023, code"},
};

nlohmann::json arrival(const QuickWorkload& w) {
  if (w.burstiness == 1) return {{"process", "poisson"}, {"rate_per_s", *w.request_rate}};
  return {{"process", "gamma"}, {"rate_per_s", *w.request_rate}, {"cv", 1.0 / std::sqrt(w.burstiness)}};
}

}  // namespace

const char* quick_dataset_names() { return "random, sharegpt, azure-conv, azure-code"; }

nlohmann::json quick_scenario(const std::string& model, const std::string& gpu, const QuickWorkload& w,
                              const std::string& data_dir) {
  if (model.empty()) throw InputError("--model", "a run without a scenario file needs --model (and --gpu)");
  if (gpu.empty()) throw InputError("--gpu", "a run without a scenario file needs --gpu (and --model)");
  if (w.request_rate && w.max_concurrency)
    throw InputError("--max-concurrency", "with --request-rate, vLLM's client queues requests past the cap, which "
                                          "kvcap does not model: give one (--max-concurrency alone is a closed loop)");
  if (w.request_rate && !(*w.request_rate > 0 && std::isfinite(*w.request_rate)))
    throw InputError("--request-rate", "expected requests per second > 0 (leave it out for vLLM's inf: all at once)");
  if (!(w.burstiness > 0 && std::isfinite(w.burstiness)))
    throw InputError("--burstiness", "expected a positive gamma shape (1 = Poisson)");
  if (w.burstiness != 1 && !w.request_rate) throw InputError("--burstiness", "shapes the gaps of --request-rate: give one");
  if (w.num_prompts < 1) throw InputError("--num-prompts", "expected at least 1 request");
  nlohmann::json doc;
  doc["name"] = "quick";
  std::string about;
  nlohmann::json workload;
  if (w.dataset == "random") {
    if (w.input_len < 1) throw InputError("--isl", "the random dataset needs --isl N (prompt tokens, >= 1)");
    if (w.output_len < 1) throw InputError("--osl", "the random dataset needs --osl N (output tokens, >= 1)");
    nlohmann::json src{{"name", "random"}, {"prompt_tokens", w.input_len}, {"output_tokens", w.output_len}};
    if (w.max_concurrency)
      src["arrival"] = {{"process", "closed_loop"}, {"concurrency", *w.max_concurrency}};
    else if (w.request_rate)
      src["arrival"] = arrival(w);
    else  // vLLM's inf: every request at t = 0, which a closed loop of num_prompts clients is
      src["arrival"] = {{"process", "closed_loop"}, {"concurrency", w.num_prompts}};
    // The request count ends the workload; the duration only bounds it.
    workload = {{"kind", "generate"}, {"duration_s", 1e9}, {"max_requests", w.num_prompts}, {"sources", {src}}};
    about = std::to_string(w.num_prompts) + " requests of " + std::to_string(w.input_len) + " prompt + " +
            std::to_string(w.output_len) + " output tokens";
  } else {
    const Dataset* d = nullptr;
    for (const auto& c : kDatasets)
      if (w.dataset == c.name) d = &c;
    if (!d)
      throw InputError("--dataset", "unknown dataset " + quote_input(w.dataset) + " (expected one of " +
                                        quick_dataset_names() + ")");
    if (w.input_len > 0 || w.output_len > 0)
      throw InputError(w.input_len > 0 ? "--isl" : "--osl",
                       std::string("the ") + d->name + " dataset brings its own lengths (--isl/--osl are for random)");
    if (w.max_concurrency)
      throw InputError("--max-concurrency", "a closed loop goes with the random dataset (traces replay arrivals)");
    const std::string path = (std::filesystem::path(data_dir) / d->path).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw InputError("--dataset", std::string(d->name) + " reads " + escape_text(path) +
                                        ", which is not there: set KVCAP_DATA_DIR to the repository's scenarios folder");
    workload = {{"kind", "trace"}, {"format", d->format}, {"path", path}, {"max_requests", w.num_prompts}};
    if (w.request_rate) {
      if (d->timestamps)
        workload["target_rate_per_s"] = *w.request_rate;  // the trace's burst shape, at this mean rate
      else
        workload["arrival"] = arrival(w);
    } else if (!d->timestamps) {
      throw InputError("--request-rate", std::string("the ") + d->name + " dataset has no arrival times: give a rate");
    }
    about = std::to_string(w.num_prompts) + " requests of " + d->about;
  }
  if (w.request_rate) about += " at " + format_number(*w.request_rate) + " req/s";
  else if (w.max_concurrency) about += ", " + std::to_string(*w.max_concurrency) + " at a time";
  else if (w.dataset == "random") about += ", all at once";
  doc["description"] = about + " (built from the command line)";
  doc["model"] = model;
  doc["gpu"] = gpu;
  doc["workload"] = workload;
  nlohmann::json slo = nlohmann::json::object();
  if (w.ttft_s > 0) slo["ttft_p99_s"] = w.ttft_s;
  if (w.tpot_s > 0) slo["tpot_p99_s"] = w.tpot_s;
  if (w.e2e_s > 0) slo["e2e_p99_s"] = w.e2e_s;
  if (!slo.empty()) doc["slo"] = slo;
  doc["seed"] = w.seed;
  return doc;
}

}  // namespace kvcap
