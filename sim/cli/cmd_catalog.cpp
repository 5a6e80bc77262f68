// `kvcap models` and `kvcap gpus`: the built-in catalogs.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/kv_format.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

namespace {

struct AttentionCounts {
  int64_t full = 0, sliding = 0, mla = 0, linear = 0, window = 0;
};

AttentionCounts count_attention(const ModelSpec& m) {
  AttentionCounts c;
  for (const auto& l : m.layers) {
    if (l.attention == AttentionKind::sliding_window) {
      ++c.sliding;
      c.window = l.sliding_window;
    } else if (l.attention == AttentionKind::mla) {
      ++c.mla;
    } else if (l.attention == AttentionKind::linear) {
      ++c.linear;
    } else {
      ++c.full;
    }
  }
  return c;
}

int run_models(bool json) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  if (!json)
    std::cout << format_text("%-16s %-34s %6s %6s %9s %8s %-26s %-10s %16s %16s %10s\n", "name", "architecture", "layers", "hidden",
                "heads/kv", "head_dim", "attention", "experts", "params_total", "params_active", "kv_B/token");
  for (const auto& name : model_catalog_names()) {
    const ModelSpec m = load_model(name);
    const ParamCount p = count_parameters(m);
    const AttentionCounts a = count_attention(m);
    const int64_t kv = kv_bytes_per_token(m, KvFormat{m.dtype, 64, 16});
    std::string attention;
    if (a.full) attention += std::to_string(a.full) + " full";
    if (a.sliding)
      attention += (attention.empty() ? "" : "+") + std::to_string(a.sliding) + " swa(" + std::to_string(a.window) + ")";
    if (a.mla) attention += (attention.empty() ? "" : "+") + std::to_string(a.mla) + " MLA";
    if (a.linear) attention += (attention.empty() ? "" : "+") + std::to_string(a.linear) + " linear";
    std::string experts = m.is_moe() ? std::to_string(m.moe.experts_per_token) + "/" + std::to_string(m.moe.num_experts)
                                     : "-";
    if (json) {
      nlohmann::ordered_json j;
      j["name"] = name;
      j["architecture"] = m.architecture;
      j["num_layers"] = m.num_layers;
      j["hidden_size"] = m.hidden_size;
      j["num_attention_heads"] = m.num_attention_heads;
      j["num_kv_heads"] = m.num_kv_heads;
      j["head_dim"] = m.head_dim;
      j["full_attention_layers"] = a.full;
      j["sliding_window_layers"] = a.sliding;
      j["sliding_window_tokens"] = a.window;
      j["mla_layers"] = a.mla;
      j["linear_attention_layers"] = a.linear;
      j["num_experts"] = m.moe.num_experts;
      j["experts_per_token"] = m.moe.experts_per_token;
      j["num_shared_experts"] = m.moe.num_shared_experts;
      j["vocab_size"] = m.vocab_size;
      j["max_position_embeddings"] = m.max_position_embeddings;
      j["dtype"] = dtype_name(m.dtype);
      j["weight_quantization"] = m.quant.method.empty() ? "none" : m.quant.method;
      j["params_total"] = p.total;
      j["params_active"] = p.active;
      j["kv_bytes_per_token"] = kv;
      list.push_back(j);
    } else {
      std::cout << format_text("%-16s %-34s %6lld %6lld %4lld/%-4lld %8lld %-26s %-10s %16lld %16lld %10lld\n", name.c_str(),
                  m.architecture.c_str(), (long long)m.num_layers, (long long)m.hidden_size,
                  (long long)m.num_attention_heads, (long long)m.num_kv_heads, (long long)m.head_dim,
                  attention.c_str(), experts.c_str(), (long long)p.total, (long long)p.active, (long long)kv);
    }
  }
  if (json) std::cout << list.dump(2) << "\n";
  else std::cout << format_text("(kv_B/token: all layers at the model dtype; experts: active/routed)\n");
  return 0;
}

int run_gpus(bool json) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  if (!json)
    std::cout << format_text("%-11s %-38s %10s %9s %10s %10s %9s %9s %-6s %8s\n", "id", "name", "mem_GiB", "HBM_TB/s", "bf16_TF",
                "fp8_TF", "host_GB/s", "link_GB/s", "link", "$/hour");
  for (const auto& g : gpu_catalog()) {
    if (json) {
      nlohmann::ordered_json j;
      j["id"] = g.id;
      j["name"] = g.name;
      j["memory_bytes"] = g.memory_bytes;
      j["hbm_bandwidth_bytes_per_s"] = g.hbm_bandwidth_bytes_per_s;
      j["bf16_flops"] = g.bf16_flops;
      j["fp8_flops"] = g.fp8_flops;
      j["int8_ops"] = g.int8_ops;
      j["host_link_bytes_per_s"] = g.host_link_bytes_per_s;
      j["interconnect_bytes_per_s"] = g.interconnect_bytes_per_s;
      j["interconnect_kind"] = g.interconnect_kind;
      j["price_per_gpu_hour_usd"] =
          g.price_per_gpu_hour_usd > 0 ? nlohmann::ordered_json(g.price_per_gpu_hour_usd) : nlohmann::ordered_json(nullptr);
      list.push_back(j);
    } else {
      char price[16] = "-";  // 0 = no public price
      if (g.price_per_gpu_hour_usd > 0) std::snprintf(price, sizeof price, "%.2f", g.price_per_gpu_hour_usd);
      std::cout << format_text("%-11s %-38s %10.2f %9.2f %10.1f %10.1f %9.0f %9.0f %-6s %8s\n", g.id.c_str(), g.name.c_str(),
                  static_cast<double>(g.memory_bytes) / (1024.0 * 1024 * 1024), g.hbm_bandwidth_bytes_per_s / 1e12,
                  g.bf16_flops / 1e12, g.fp8_flops / 1e12, g.host_link_bytes_per_s / 1e9,
                  g.interconnect_bytes_per_s / 1e9, g.interconnect_kind.c_str(), price);
    }
  }
  if (json) std::cout << list.dump(2) << "\n";
  else std::cout << format_text("(dense tensor-core peaks; links per direction; prices: see catalog/gpus/*.json)\n");
  return 0;
}

}  // namespace

void add_catalog_commands(CLI::App& app, CommandAction& action) {
  auto models_json = std::make_shared<bool>(false);
  CLI::App* models = app.add_subcommand("models", "List the built-in model catalog");
  models->add_flag("--json", *models_json, "print a JSON array");
  models->callback([models_json, &action] { action = [models_json] { return run_models(*models_json); }; });

  auto gpus_json = std::make_shared<bool>(false);
  CLI::App* gpus = app.add_subcommand("gpus", "List the built-in GPU catalog");
  gpus->add_flag("--json", *gpus_json, "print a JSON array");
  gpus->callback([gpus_json, &action] { action = [gpus_json] { return run_gpus(*gpus_json); }; });
}

}  // namespace kvcap::cli
