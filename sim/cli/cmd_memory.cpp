// `kvcap memory`: the per-GPU memory budget a vLLM server would compute at startup, for a model
// on a GPU, and optionally whether a given load (context length × concurrency) fits.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/activation.hpp"
#include "sim/memory/kv_format.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/mm_limits.hpp"
#include "sim/memory/speculative_config.hpp"
#include "sim/memory/weight_bytes.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

namespace {

struct MemoryOptions {
  std::string model;
  std::string gpu;
  std::vector<std::string> stage_gpus;  ///< --stage-gpus: one per pipeline stage, instead of --gpu
  EngineMemoryConfig engine;
  std::optional<double> kv_cache_memory_bytes;
  std::optional<double> gpu_memory_bytes;
  std::optional<double> price_per_gpu_hour;
  std::optional<int64_t> context_len;
  std::optional<int64_t> concurrency;
  std::optional<int64_t> max_num_batched_tokens, max_num_seqs;  ///< unset: vLLM's serve defaults
  std::optional<double> gpu_memory_utilization;                  ///< unset: vLLM's default for the version
  std::optional<double> cuda_graph_memory_bytes;
  std::string mm_limits;  ///< --limit-mm-per-prompt's JSON
  std::string speculative_config;  ///< --speculative-config's JSON
  bool json = false;
};

/// Byte counts arrive as doubles so that 8e9 is accepted; they must still be whole and positive.
int64_t whole_bytes(double v, const char* flag) {
  if (!std::isfinite(v) || v < 1 || v > 9.0e18 || std::floor(v) != v)
    throw InputError(flag, "expected a positive whole number of bytes, got " + std::to_string(v));
  return static_cast<int64_t>(v);
}

/// 449856 -> "449,856", as vLLM prints token counts.
std::string thousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string attention_summary(const ModelSpec& m) {
  int64_t sliding = 0, full = 0, mla = 0, linear = 0, window = 0, compressed[3] = {0, 0, 0};
  for (const auto& l : m.layers) {
    if (l.attention == AttentionKind::compressed) {
      ++compressed[l.compress_ratio == 0 ? 0 : l.compress_ratio == 4 ? 1 : 2];
      window = l.sliding_window;
    } else if (l.attention == AttentionKind::sliding_window) {
      ++sliding;
      window = l.sliding_window;
    } else if (l.attention == AttentionKind::mla) {
      ++mla;
    } else if (l.attention == AttentionKind::linear) {
      ++linear;
    } else {
      ++full;
    }
  }
  std::string s;
  if (full) s += std::to_string(full) + " full";
  if (sliding) s += (s.empty() ? "" : " + ") + std::to_string(sliding) + " sliding(" + std::to_string(window) + ")";
  if (mla) s += (s.empty() ? "" : " + ") + std::to_string(mla) + " MLA";
  if (linear) s += (s.empty() ? "" : " + ") + std::to_string(linear) + " linear (Gated DeltaNet)";
  if (compressed[0] + compressed[1] + compressed[2] > 0)
    s += (s.empty() ? "" : " + ") + std::to_string(compressed[0]) + " window-only (" + std::to_string(window) + ") + " +
         std::to_string(compressed[1]) + " compressed x4 + " + std::to_string(compressed[2]) + " compressed x128 (DeepSeek-V4)";
  return s;
}

int run_memory(const MemoryOptions& o) {
  ModelSpec model = load_model(o.model);
  if (o.gpu.empty() == o.stage_gpus.empty())
    throw InputError("--gpu", o.gpu.empty() ? "required: the GPU (or --stage-gpus, one per pipeline stage)"
                                            : "give --gpu or --stage-gpus, not both");
  EngineMemoryConfig engine = o.engine;
  for (const std::string& id : o.stage_gpus) {
    engine.stage_gpus.push_back(load_gpu(id));
    validate_gpu(engine.stage_gpus.back(), "--stage-gpus " + id);
  }
  if (!o.stage_gpus.empty() && o.gpu_memory_bytes)
    throw InputError("--gpu-memory-bytes", "sets the size of --gpu; with --stage-gpus give each stage a GPU file instead");
  // The engine's first rank (stage 0) is the GPU the serve defaults and per-GPU labels follow.
  GpuSpec gpu = o.stage_gpus.empty() ? load_gpu(o.gpu) : engine.stage_gpus.front();
  if (o.gpu_memory_bytes) {
    gpu.memory_bytes = whole_bytes(*o.gpu_memory_bytes, "--gpu-memory-bytes");
    gpu.visible_memory_bytes = 0;  // the given size is what vLLM sees
  }
  if (o.price_per_gpu_hour) {
    if (!std::isfinite(*o.price_per_gpu_hour) || *o.price_per_gpu_hour < 0)
      throw InputError("--price-per-gpu-hour", "expected a non-negative number");
    gpu.price_per_gpu_hour_usd = *o.price_per_gpu_hour;
  }
  if (o.stage_gpus.empty()) validate_gpu(gpu, "--gpu " + o.gpu);

  if (o.kv_cache_memory_bytes) engine.kv_cache_memory_bytes = whole_bytes(*o.kv_cache_memory_bytes, "--kv-cache-memory-bytes");
  if (o.context_len.has_value() != o.concurrency.has_value())
    throw InputError(o.context_len ? "--concurrency" : "--context-len",
                     "--context-len and --concurrency go together (tokens per request, requests at once)");
  for (const auto& [value, flag] : {std::pair{o.max_num_batched_tokens, "--max-num-batched-tokens"},
                                    std::pair{o.max_num_seqs, "--max-num-seqs"}})
    if (value && *value < 1) throw InputError(flag, "expected a positive integer, got " + std::to_string(*value));
  if (o.gpu_memory_utilization) {
    if (!(*o.gpu_memory_utilization > 0 && *o.gpu_memory_utilization <= 1))
      throw InputError("--gpu-memory-utilization", "expected a fraction in (0, 1], got " + std::to_string(*o.gpu_memory_utilization));
    engine.gpu_memory_utilization = *o.gpu_memory_utilization;
  }
  if (o.cuda_graph_memory_bytes)
    engine.cuda_graph_memory_bytes =
        *o.cuda_graph_memory_bytes == 0 ? 0 : whole_bytes(*o.cuda_graph_memory_bytes, "--cuda-graph-memory-bytes");
  if (!o.mm_limits.empty()) {
    const MmLimits limits = parse_mm_limits(o.mm_limits, "--limit-mm-per-prompt");
    engine.mm_image_limit = limits.image;
    engine.mm_video_limit = limits.video;
  }
  if (!o.speculative_config.empty()) {
    if (engine.num_speculative_tokens > 0)
      throw InputError("--speculative-config", "give the tokens in the JSON's num_speculative_tokens, not also --num-speculative-tokens");
    const SpeculativeConfig spec = parse_speculative_config(o.speculative_config, "--speculative-config");
    engine.num_speculative_tokens = spec.num_speculative_tokens;
    engine.drafter = spec.drafter;
  }
  if (o.max_num_batched_tokens) engine.max_num_batched_tokens = *o.max_num_batched_tokens;
  if (o.max_num_seqs) engine.max_num_seqs = *o.max_num_seqs;
  constexpr int64_t kMaxLoad = int64_t{1} << 40;
  if (o.context_len && (*o.context_len < 1 || *o.context_len > kMaxLoad))
    throw InputError("--context-len", "expected a number of tokens in [1, 2^40], got " + std::to_string(*o.context_len));
  if (o.concurrency && (*o.concurrency < 1 || *o.concurrency > kMaxLoad))
    throw InputError("--concurrency", "expected a number of requests in [1, 2^40], got " + std::to_string(*o.concurrency));

  const MemoryBudget b = compute_memory_budget(model, gpu, engine);
  const ParamCount params = count_parameters(model);

  // Load check: each request holds blocks_for_tokens(context) blocks; vLLM keeps block 0 as its
  // null block, so num_gpu_blocks - 1 are usable.
  int64_t load_blocks = 0, load_bytes = 0, usable_blocks = b.num_gpu_blocks - 1;
  if (o.context_len) {
    // Checked: 2^40 requests of 2^40 tokens must say "does not fit", not wrap to a small number.
    const auto blocks = checked_mul(*o.concurrency, b.blocks_for_tokens(*o.context_len));
    const auto bytes = blocks ? checked_mul(*blocks, b.page_bytes_per_gpu) : std::nullopt;
    if (!bytes)
      throw InputError("--concurrency", std::to_string(*o.concurrency) + " requests of " + std::to_string(*o.context_len) +
                                            " tokens need more KV bytes than 64 bits count: far beyond any GPU");
    load_blocks = *blocks;
    load_bytes = *bytes;
  }
  const bool fits = load_blocks <= usable_blocks;

  if (o.json) {
    nlohmann::ordered_json j;
    j["model"] = model.name;
    j["architecture"] = model.architecture;
    j["gpu"] = gpu.id;
    j["gpu_memory_bytes"] = gpu.memory_bytes;
    j["total_bytes_seen_by_vllm"] = b.total_bytes_per_gpu;
    j["vllm_version"] = engine.vllm_version;
    j["tensor_parallel_size"] = engine.tensor_parallel_size;
    j["pipeline_parallel_size"] = engine.pipeline_parallel_size;
    j["stage_layers"] = b.stage_layers;
    j["binding_stage"] = b.binding_stage;
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const MemoryBudget::Stage& st : b.stages)
      stages.push_back({{"model_loading_bytes_per_gpu", st.model_loading_bytes_per_gpu},
                        {"activation_bytes_per_gpu", st.activation_bytes_per_gpu},
                        {"non_torch_bytes_per_gpu", st.non_torch_bytes_per_gpu},
                        {"kv_cache_bytes_per_gpu", st.kv_cache_bytes_per_gpu}});
    j["stages"] = stages;
    if (!engine.stage_gpus.empty()) {
      std::vector<std::string> ids;
      for (const GpuSpec& g : engine.stage_gpus) ids.push_back(g.id);
      j["stage_gpus"] = ids;
    }
    j["dtype"] = dtype_name(parse_model_dtype(engine.dtype, model.dtype));
    j["kv_cache_dtype"] = dtype_name(b.kv_dtype);
    const WeightQuant quant = resolve_weight_quant(engine.quantization, model);
    j["weight_quantization"] = quant.method.empty() ? "none" : quant.method;
    j["params_total"] = params.total;
    j["params_active"] = params.active;
    j["vision_encoder_params"] = model.vision_encoder_params;
    if (!model.vision_encoder_note.empty()) j["vision_encoder_note"] = model.vision_encoder_note;
    if (b.vision_profile.items > 0) {
      const VisionProfileBatch& v = b.vision_profile;
      j["vision_profile"] = {{"modality", v.video ? "video" : "image"},     {"items", v.items},
                             {"patches_per_item", v.patches_per_item},      {"embeddings_per_item", v.embeds_per_item},
                             {"encoder_budget_tokens", v.budget_tokens},    {"cache_rows_per_item", v.cache_rows_per_item}};
    }
    j["kv_bytes_per_token"] = b.kv_bytes_per_token;
    j["kv_bytes_per_token_per_gpu"] = b.kv_bytes_per_token_per_gpu;
    j["weight_bytes"] = b.weight_bytes;
    j["weight_bytes_per_gpu"] = b.weight_bytes_per_gpu;
    j["rope_cache_bytes_per_gpu"] = b.rope_cache_bytes_per_gpu;
    j["allocator_rounding_bytes_per_gpu"] = b.allocator_rounding_bytes_per_gpu;
    j["model_loading_bytes_per_gpu"] = b.model_loading_bytes_per_gpu();
    j["requested_bytes_per_gpu"] = b.requested_bytes_per_gpu;
    j["activation_bytes_per_gpu"] = b.activation_bytes_per_gpu;
    j["sampler"] = b.sampler;
    j["max_in_flight_tokens"] = b.max_in_flight_tokens;
    j["non_torch_bytes_per_gpu"] = b.non_torch_bytes_per_gpu;
    j["gpu_memory_utilization"] = b.gpu_memory_utilization;
    j["cuda_graph_in_budget"] = b.cuda_graph_in_budget;
    j["cuda_graph_bytes_per_gpu"] =
        b.cuda_graph_reserve_unknown ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(b.cuda_graph_bytes_per_gpu);
    j["cuda_graph_estimated_by_kvcap"] = b.cuda_graph_reserve_estimated;
    j["model_runner_v2"] = b.model_runner_v2;
    j["kv_cache_bytes_per_gpu"] = b.kv_cache_bytes_per_gpu;
    j["kv_cache_memory_from_flag"] = b.kv_cache_memory_from_flag;
    j["block_size"] = b.block_size;
    if (b.decode_context_parallel_size > 1) j["decode_context_parallel_size"] = b.decode_context_parallel_size;
    j["layers_per_block"] = b.kv.layers_per_group;
    if (b.kv.full_block_ratio > 1) j["full_attention_block_size"] = b.kv.full_block_size();
    j["page_bytes_per_gpu"] = b.page_bytes_per_gpu;
    j["num_gpu_blocks"] = b.num_gpu_blocks;
    j["kv_cache_tokens"] = b.kv_cache_tokens;
    j["max_model_len"] = b.max_model_len;
    j["max_num_batched_tokens"] = b.max_num_batched_tokens;
    j["max_num_seqs"] = b.max_num_seqs;
    j["batch_defaults_rule"] = b.batch_defaults_rule.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(b.batch_defaults_rule);
    j["blocks_per_max_len_request"] = b.blocks_per_max_len_request;
    j["max_concurrency"] = b.max_concurrency;
    j["full_attention_groups"] = b.kv.full_groups;
    j["sliding_window_groups"] = b.kv.swa_groups;
    j["sliding_window_tokens"] = b.kv.sliding_window;
    if (b.deepseek_v4_layout) {
      nlohmann::ordered_json own = nlohmann::ordered_json::array();
      for (const auto& g : b.kv.own_window_groups) own.push_back({{"page_tokens", g.page_tokens}, {"window_tokens", g.window}});
      j["deepseek_v4"] = {{"windowed_groups", own},
                          {"check_page_bytes_per_gpu", b.check_page_bytes_per_gpu},
                          {"concurrency_blocks_per_request", b.concurrency_blocks_per_request}};
    }
    j["linear_state_groups"] = b.kv.state_groups;
    j["linear_state_pages_per_request"] = b.kv.state_pages_per_request;
    j["linear_state_bytes_per_gpu"] = b.linear_state_bytes_per_gpu;
    j["requested_block_size"] = b.requested_block_size;
    j["mamba_cache_mode"] = b.mamba_cache_mode.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(b.mamba_cache_mode);
    j["num_speculative_tokens"] = engine.num_speculative_tokens;
    j["draft_layers"] = b.draft_layers;
    if (engine.drafter) {
      const DrafterSpec& d = *engine.drafter;
      j["drafter"] = {{"config", d.name},
                      {"architecture", d.architecture},
                      {"method", d.method()},
                      {"layers", b.drafter_layers},
                      {"sliding_window", d.sliding_window},
                      {"weight_bytes_per_gpu", b.drafter_weight_bytes_per_gpu},
                      {"aux_hidden_bytes_per_gpu", b.drafter_aux_hidden_bytes_per_gpu}};
    }
    j["kv_cache_tokens_rule"] = b.tokens_from_concurrency ? "max_concurrency x max_model_len (vLLM >= 0.20)"
                                                          : "num_gpu_blocks / groups x block_size";
    if (o.context_len) {
      nlohmann::ordered_json l;
      l["context_len_tokens"] = *o.context_len;
      l["concurrency"] = *o.concurrency;
      l["blocks_needed"] = load_blocks;
      l["usable_blocks"] = usable_blocks;
      l["kv_bytes_needed_per_gpu"] = load_bytes;
      l["fits"] = fits;
      j["load"] = l;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }

  auto row = [](const std::string& k, const std::string& v) { std::cout << format_text("  %-34s %s\n", k.c_str(), v.c_str()); };
  auto num = [](int64_t v) { return std::to_string(v); };
  if (engine.pipeline_parallel_size > 1) {
    std::string layers;
    for (size_t s = 0; s < b.stage_layers.size(); ++s) layers += (s ? ", " : "") + num(b.stage_layers[s]);
    std::string on = gpu.name;
    if (!engine.stage_gpus.empty()) {
      on.clear();
      for (size_t s = 0; s < engine.stage_gpus.size(); ++s) on += (s ? " | " : "") + engine.stage_gpus[s].name;
    }
    std::cout << format_text("%s on %s x%lld (tensor parallel) x %lld pipeline stages of %s layers; per-GPU figures are stage %lld's (fewest blocks)\n",
                model.name.c_str(), on.c_str(), static_cast<long long>(engine.tensor_parallel_size),
                static_cast<long long>(engine.pipeline_parallel_size), layers.c_str(), static_cast<long long>(b.binding_stage));
  } else {
    std::cout << format_text("%s on %s x%lld (tensor parallel)\n", model.name.c_str(), gpu.name.c_str(),
                static_cast<long long>(engine.tensor_parallel_size));
  }
  std::cout << format_text("model\n");
  row("architecture", model.architecture);
  row("layers", num(model.num_layers) + " (" + attention_summary(model) + ")");
  row("parameters total / active", num(params.total) + " / " + num(params.active));
  if (model.vision_encoder_params > 0) {
    const VisionProfileBatch& v = b.vision_profile;
    std::string profiled;
    if (v.items > 0) {
      profiled = "profiled on " + num(v.items) + " dummy " + (v.video ? "video(s)" : "image(s)") + " of " +
                 num(v.patches_per_item) + " patches (" + num(v.embeds_per_item) + " embeddings; encoder budget " +
                 num(v.budget_tokens) + " tokens)" +
                 (v.cache_rows_per_item > 0 ? ", each cached as a zero-filled copy of " + num(v.cache_rows_per_item) + " rows"
                                            : std::string()) +
                 ", held through the sampler" +
                 // The dummy video can outweigh the image many times over (Qwen2.5-VL at 128,000
                 // tokens: 7 x the image's patches); say how to profile the image alone.
                 (v.video && v.patches_per_item > model.vision_profile.patches
                      ? "; --limit-mm-per-prompt '{\"video\": 0}' profiles the image (" + num(model.vision_profile.patches) +
                            " patches) instead"
                      : std::string());
    } else if (engine.language_model_only || model.vision_profile.patches > 0) {
      profiled = "not loaded (text only)";
    } else {
      profiled = "its profiling on dummy images is not modelled";
    }
    row("vision encoder (in the total)", num(model.vision_encoder_params) + " parameters; " + profiled);
  }
  if (!model.vision_encoder_note.empty()) row("vision encoder", model.vision_encoder_note);
  std::cout << format_text("KV cache format\n");
  row("kv cache dtype", dtype_name(b.kv_dtype));
  row("KV bytes per token (all GPUs)", num(b.kv_bytes_per_token));
  row("KV bytes per token per GPU", num(b.kv_bytes_per_token_per_gpu));
  std::cout << format_text("per-GPU memory\n");
  row("total (nvidia-smi / seen by vLLM)", gib_text(gpu.memory_bytes) + " / " + gib_text(b.total_bytes_per_gpu) +
                                              (gpu.visible_memory_bytes > 0 ? "" : "  (not measured: nvidia-smi's)"));
  char util[32];
  std::snprintf(util, sizeof util, "%.2f", b.gpu_memory_utilization);
  row(std::string("usable (x gpu_memory_utilization ") + util + ")", gib_text(b.requested_bytes_per_gpu));
  row("weights", gib_text(b.weight_bytes_per_gpu) + "  (whole model " + gib_text(b.weight_bytes) + ")");
  if (!model.rope_tables.empty()) {
    std::string tables;
    for (const RopeTable& t : model.rope_tables)
      tables += (tables.empty() ? "" : " + ") + num(t.positions) + " x " + num(t.rotary_dim);
    row("RoPE cos/sin tables", gib_text(b.rope_cache_bytes_per_gpu) + "  (" + tables + ", whole on every GPU)");
  }
  if (b.allocator_rounding_bytes_per_gpu > 0)
    row("allocator rounding", gib_text(b.allocator_rounding_bytes_per_gpu) +
                                  "  (weight tensors' blocks beyond their bytes: PyTorch's caching allocator)");
  row("profiling batch (tokens / seqs)", num(b.max_num_batched_tokens) + " / " + num(b.max_num_seqs) +
                                           (b.batch_defaults_rule.empty() ? "" : "  (" + b.batch_defaults_rule + ")"));
  row("activation peak (estimate, vLLM " + engine.vllm_version + ")",
      gib_text(b.activation_bytes_per_gpu) +
          (b.kv_cache_memory_from_flag ? "  (not used: --kv-cache-memory-bytes)"
           : b.sampler == "pytorch"    ? "  (sampler: PyTorch top-k/top-p sort over the profiled sequences; --sampler)"
           : b.sampler == "flashinfer" ? "  (sampler: FlashInfer top-k/top-p; --sampler)"
           : b.sampler == "triton"     ? "  (sampler: Triton top-k/top-p kernel and its cached buffer; --sampler)"
                                       : ""));
  row("non-torch overhead (estimate)", gib_text(b.non_torch_bytes_per_gpu) + (b.kv_cache_memory_from_flag ? "  (not used)" : ""));
  if (!b.cuda_graph_in_budget)
    row("CUDA graphs", engine.enforce_eager ? std::string("none (--enforce-eager)")
                                            : "captured after the cache is sized: outside vLLM " + engine.vllm_version + "'s budget");
  else if (b.cuda_graph_reserve_mrv2_stub)
    row("CUDA graphs", "none reserved: vLLM " + engine.vllm_version + " runs this model on Model Runner V2" +
                           (engine.drafter && engine.drafter->dflash2() ? " (a DFlash2 drafter forces it)" : "") +
                           ", whose profile_cudagraph_memory() reserved nothing until 0.29 (PR #36520; estimator PR #53306)");
  else if (b.cuda_graph_reserve_unknown)
    row("CUDA graphs", "vLLM >= 0.21 reserves its estimate here; not included (kvcap's estimate does not hold for "
                       "hybrid models, DeepSeek-V4 or speculative decoding): pass --cuda-graph-memory-bytes (its log's \"Estimated "
                       "CUDA graph memory\"), or the cache below is that much too large");
  else if (b.cuda_graph_reserve_estimated)
    row("CUDA graphs (reserved)",
        gib_text(b.cuda_graph_bytes_per_gpu) + "  (kvcap's estimate of vLLM's estimate for " + num(b.cuda_graph_captures.piecewise) +
            " PIECEWISE and " + num(b.cuda_graph_captures.full) + " FULL graphs up to " + num(b.cuda_graph_captures.largest) +
            " tokens, about +-0.25 GiB; the log's estimate as --cuda-graph-memory-bytes replaces it: " +
            (b.model_runner_v2 ? "\"CUDA graph memory profile: ... estimate X GiB\")" : "\"Estimated CUDA graph memory\")"));
  else
    row("CUDA graphs (reserved)", gib_text(b.cuda_graph_bytes_per_gpu));
  row("KV cache", gib_text(b.kv_cache_bytes_per_gpu) + (b.kv_cache_memory_from_flag ? "  (from --kv-cache-memory-bytes)" : ""));
  if (b.stages.size() > 1) {
    // Each stage's workers log their own lines (V0 each worker; V1 the engine takes the minimum).
    std::cout << format_text("pipeline stages (per GPU: model loading / activation / non-torch / KV cache)\n");
    for (size_t s = 0; s < b.stages.size(); ++s) {
      const MemoryBudget::Stage& st = b.stages[s];
      row("stage " + num(static_cast<int64_t>(s)) + " (" + num(b.stage_layers[s]) + " layers)" +
              (static_cast<int64_t>(s) == b.binding_stage ? " *" : ""),
          gib_text(st.model_loading_bytes_per_gpu) + " / " + gib_text(st.activation_bytes_per_gpu) + " / " +
              gib_text(st.non_torch_bytes_per_gpu) + " / " + gib_text(st.kv_cache_bytes_per_gpu));
    }
  }
  std::cout << format_text("blocks\n");
  row("block size / layers per block", num(b.block_size) + " tokens / " + num(b.kv.layers_per_group) + " layers");
  if (b.decode_context_parallel_size > 1)
    row("decode context parallel", num(b.decode_context_parallel_size) + " GPUs share a block (" +
                                       num(b.block_size / b.decode_context_parallel_size) +
                                       " tokens on each); the token count is multiplied by " + num(b.decode_context_parallel_size));
  row("bytes per block", num(b.page_bytes_per_gpu));
  if (b.kv.full_block_ratio > 1)
    row("full-attention pages", num(b.kv.full_block_size()) + " tokens (" + num(b.kv.full_block_ratio) +
                                    "x less KV a token than the sliding layers: vLLM's unify_kv_cache_spec_page_size)");
  if (b.kv.swa_groups > 0)
    row("groups (full / sliding)", num(b.kv.full_groups) + " / " + num(b.kv.swa_groups) + " (window " +
                                        num(b.kv.sliding_window) + " tokens)");
  if (b.deepseek_v4_layout) {
    // sim/memory/deepseek_v4.hpp: the five groups and what a block id costs where.
    std::string own;
    for (const auto& g : b.kv.own_window_groups)
      own += (own.empty() ? "" : ", ") + num(g.page_tokens) + "-token pages over " + num(g.window);
    row("groups (DeepSeek-V4)", "1 full (" + num(b.kv.full_block_size()) + "-token pages of compressed KV and indexer keys) + " +
                                    num(static_cast<int64_t>(b.kv.own_window_groups.size())) + " windowed (" + own + ")");
    row("startup check per block", num(b.check_page_bytes_per_gpu) + " bytes (the unpacked layer tuples vLLM's check charges)");
  }
  if (b.kv.state_groups > 0) {
    row("groups (full / linear state)", num(b.kv.full_groups) + " / " + num(b.kv.state_groups) + " (" +
                                             num(b.kv.state_pages_per_request) + " page(s) per request each, mamba_cache_mode " +
                                             b.mamba_cache_mode + ")");
    row("linear-attention state per layer", num(b.linear_state_bytes_per_gpu) + " bytes per request; block size raised from " +
                                                 num(b.requested_block_size) + " so one page holds it");
  }
  if (b.draft_layers > 0)
    row("MTP drafter", num(b.draft_layers) + " layer(s), " + num(engine.num_speculative_tokens) +
                           " speculative tokens: weights loaded, attention in the pool");
  if (engine.drafter) {
    const DrafterSpec& d = *engine.drafter;
    row(d.architecture, num(b.drafter_layers) + (d.sliding_window > 0 ? " sliding-window layer(s) (window " + num(d.sliding_window) + ")"
                                                                      : " full-attention layer(s)") +
                            " in the pool, " + num(engine.num_speculative_tokens) + " speculative tokens; weights " +
                            gib_text(b.drafter_weight_bytes_per_gpu) + " per GPU, held target hidden states " +
                            gib_text(b.drafter_aux_hidden_bytes_per_gpu));
  }
  row("num_gpu_blocks", num(b.num_gpu_blocks));
  row("KV cache capacity", num(b.kv_cache_tokens) + " tokens");
  char conc[64];
  std::snprintf(conc, sizeof conc, "%.2fx", b.max_concurrency);
  row("max concurrency at " + num(b.max_model_len) + " tokens", conc);
  // The lines a vLLM server prints at startup, worded as vLLM words them, to compare with a log.
  std::cout << format_text("as vLLM %s logs it (per GPU)\n", engine.vllm_version.c_str());
  std::cout << format_text("  Model loading took %.4f GiB\n", static_cast<double>(b.model_loading_bytes_per_gpu()) / (1024.0 * 1024.0 * 1024.0));
  if (b.cuda_graph_in_budget && !b.cuda_graph_reserve_unknown && !b.model_runner_v2)
    std::cout << format_text("  Estimated CUDA graph memory: %.2f GiB total\n",
                             static_cast<double>(b.cuda_graph_bytes_per_gpu) / (1024.0 * 1024.0 * 1024.0));
  std::cout << format_text("  Available KV cache memory: %s\n", gib_text(b.kv_cache_bytes_per_gpu).c_str());
  std::cout << format_text("  GPU KV cache size: %s tokens%s", thousands(b.kv_cache_tokens).c_str(),
                           b.logs_size_and_concurrency_on_one_line ? ", " : "\n  ");
  std::cout << format_text("Maximum concurrency for %s tokens per request: %.2fx\n", thousands(b.max_model_len).c_str(),
                           b.max_concurrency);
  if (o.context_len) {
    std::cout << format_text("load: %lld requests x %lld tokens\n", static_cast<long long>(*o.concurrency),
                static_cast<long long>(*o.context_len));
    row("blocks needed / usable", num(load_blocks) + " / " + num(usable_blocks));
    row("KV memory needed per GPU", gib_text(load_bytes));
    row("fits", fits ? "yes" : "no");
  }
  return 0;
}

}  // namespace

void add_memory_command(CLI::App& app, CommandAction& action) {
  auto o = std::make_shared<MemoryOptions>();
  CLI::App* cmd = app.add_subcommand("memory", "Per-GPU memory budget and KV-cache capacity, as vLLM computes it at startup");
  cmd->add_option("--model", o->model, "catalog name (see `kvcap models`) or path to a HuggingFace config.json")->required();
  cmd->add_option("--gpu", o->gpu, "catalog id (see `kvcap gpus`) or path to a GPU JSON file");
  cmd->add_option("--stage-gpus", o->stage_gpus,
                  "instead of --gpu: one GPU per pipeline stage, first stage first (stages on different cards)")
      ->delimiter(',');
  cmd->add_option("--tensor-parallel-size,--tp", o->engine.tensor_parallel_size, "GPUs each pipeline stage is split over");
  cmd->add_option("--pipeline-parallel-size,--pp", o->engine.pipeline_parallel_size,
                  "pipeline stages (vLLM's default layer partition); the stage with the fewest blocks sets the cache");
  cmd->add_option("--pp-layer-partition", o->engine.pp_layer_partition,
                  "VLLM_PP_LAYER_PARTITION: decoder layers per pipeline stage, comma-separated (they must add up to the model's)")
      ->delimiter(',');
  cmd->add_option("--data-parallel-size,--dp", o->engine.data_parallel_size,
                  "data-parallel engines; each sizes its own cache (figures are one GPU of one engine)");
  cmd->add_option("--decode-context-parallel-size,--dcp", o->engine.decode_context_parallel_size,
                  "decode context parallelism: a request's KV is spread over this many of the TP GPUs (a divisor of "
                  "--tensor-parallel-size; vLLM >= 0.11)");
  cmd->add_flag("--enable-expert-parallel", o->engine.enable_expert_parallel,
                "spread whole MoE experts over data x tensor parallel GPUs instead of slicing each over TP");
  cmd->add_option("--kv-cache-dtype", o->engine.kv_cache_dtype, "auto|bf16|fp16|fp8|fp8_e4m3|fp8_e5m2|int8|int4");
  cmd->add_option("--kv-quant-group-size", o->engine.kv_quant_group_size,
                  "int8/int4 KV: elements per fp16 scale (default 64)");
  cmd->add_option("--dtype", o->engine.dtype, "model dtype: auto|bfloat16|float16|float32");
  cmd->add_option("--quantization", o->engine.quantization,
                  "weight quantization: none, fp8, fp8-block, int8, awq, gptq, int4, auto-round, nvfp4 or mxfp4 (default: as "
                  "the config declares; fp8-block: 128 x 128 block scales, as Qwen's and DeepSeek's -FP8 checkpoints)");
  cmd->add_option("--gpu-memory-utilization", o->gpu_memory_utilization,
                  "fraction of GPU memory vLLM may use (default: vLLM's, 0.9; 0.92 from 0.21)");
  cmd->add_option("--cuda-graph-memory-bytes", o->cuda_graph_memory_bytes,
                  "vLLM >= 0.21: the CUDA-graph reserve its log estimates (\"Estimated CUDA graph memory\")");
  cmd->add_flag("--enforce-eager", o->engine.enforce_eager, "no CUDA graphs (nothing to reserve)");
  cmd->add_option("--max-model-len", o->engine.max_model_len, "tokens per request (default: max_position_embeddings)");
  cmd->add_option("--block-size", o->engine.block_size, "tokens per KV block (16)");
  cmd->add_option("--max-num-batched-tokens", o->max_num_batched_tokens,
                  "tokens per forward pass (default: vLLM's for --vllm-version and the GPU, e.g. 8192 on H100, 2048 on A100)");
  cmd->add_option("--max-num-seqs", o->max_num_seqs, "sequences per batch (default: vLLM's, e.g. 1024 on H100, 256 on A100)");
  cmd->add_option("--vllm-version", o->engine.vllm_version,
                  "vLLM release whose startup accounting to follow (e.g. 0.11, 0.19; the sampler, non-torch memory and CUDA-graph reserve changed; default: the current release)")
      ->capture_default_str();
  cmd->add_flag_function(
      "--enable-prefix-caching,!--no-enable-prefix-caching",
      [o](int64_t n) { o->engine.enable_prefix_caching = n > 0; },
      "linear-attention models: prefix caching keeps 2 state pages per request (mamba_cache_mode align), "
      "1 without (default: vLLM's for --vllm-version, on from 0.27)");
  cmd->add_flag_function(
      "--async-scheduling,!--no-async-scheduling",
      [o](int64_t n) { o->engine.async_scheduling = n > 0; },
      "vLLM's async scheduling (default: on). From vLLM 0.26 a sliding-window layer keeps the tokens of every batch "
      "in flight per request: 2 x max_num_batched_tokens with it, 1 x without");
  cmd->add_option("--sampler", o->engine.sampler,
                  "top-k/top-p sampler the profiling run exercises: auto (vLLM's default for --vllm-version: FlashInfer in "
                  "the images before 0.11, the PyTorch sort on 0.11-0.16, the Triton kernel on 0.17-0.20, FlashInfer from "
                  "0.21), flashinfer (also 0.11.0's image, VLLM_USE_FLASHINFER_SAMPLER=1), pytorch (also a pip install of "
                  "vLLM 0.8-0.10 without FlashInfer: its sort holds more memory) or triton (0.17 and later)")
      ->capture_default_str();
  cmd->add_flag("--vllm-use-v1", o->engine.vllm_use_v1,
                "VLLM_USE_V1=1 on a 0.7 release: the V1 engine as it then was (profiles logits of every batched token)");
  cmd->add_option("--mxfp4-backend", o->engine.mxfp4_backend,
                  "MXFP4 MoE kernel, which pads the experts: auto (what vLLM's docker images pick for the GPU: Marlin below "
                  "Hopper) or marlin (Hopper without triton_kernels: pip installs before vLLM 0.12, or VLLM_MXFP4_USE_MARLIN=1)")
      ->capture_default_str();
  cmd->add_flag("--language-model-only", o->engine.language_model_only,
                "serve a vision-language checkpoint as text only: no vision tower weights or image profiling");
  cmd->add_option("--limit-mm-per-prompt", o->mm_limits,
                  "vLLM's --limit-mm-per-prompt as JSON, e.g. '{\"video\": 0}': items per prompt by modality (image, "
                  "video); 0 turns a modality off, so it is not profiled (every modality off: text only)");
  cmd->add_option("--num-speculative-tokens", o->engine.num_speculative_tokens,
                  "MTP speculative decoding with the model's own MTP layers (vLLM --speculative-config method mtp)");
  cmd->add_option("--speculative-config", o->speculative_config,
                  "vLLM's --speculative-config as JSON: '{\"method\": \"dflash\", \"model\": \"DRAFTER/config.json\", "
                  "\"num_speculative_tokens\": 7}' (a DFlash or DFlash2 drafter, or method eagle3 with an EAGLE-3 head: its "
                  "weights, KV layers and held hidden states) or '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}' (the model's own MTP layers)");
  cmd->add_option("--mamba-cache-dtype", o->engine.mamba_cache_dtype,
                  "linear-attention conv state dtype: auto|float32|bfloat16|float16 (auto = model dtype)");
  cmd->add_option("--mamba-ssm-cache-dtype", o->engine.mamba_ssm_cache_dtype,
                  "linear-attention recurrent state dtype: auto|float32|bfloat16|float16 (auto = the config's mamba_ssm_dtype)");
  cmd->add_option("--kv-cache-memory-bytes", o->kv_cache_memory_bytes, "KV cache size per GPU; skips the profiling estimate");
  cmd->add_option("--gpu-memory-bytes", o->gpu_memory_bytes, "override the GPU's memory size");
  cmd->add_option("--price-per-gpu-hour", o->price_per_gpu_hour, "override the GPU's price (USD per GPU-hour)");
  cmd->add_option("--context-len", o->context_len, "tokens per request of a load to check (with --concurrency)");
  cmd->add_option("--concurrency", o->concurrency, "requests at once of a load to check (with --context-len)");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o, &action] { action = [o] { return run_memory(*o); }; });
}

}  // namespace kvcap::cli
