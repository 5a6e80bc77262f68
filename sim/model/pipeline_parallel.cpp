#include "sim/model/pipeline_parallel.hpp"

#include <algorithm>
#include <string>

#include "sim/util/error.hpp"

namespace kvcap {

std::vector<int64_t> pipeline_stage_layers(int64_t num_layers, int64_t pp, const std::vector<int64_t>& partition) {
  if (pp < 1 || pp > num_layers)
    throw FieldError("pipeline_parallel_size", "expected 1 to " + std::to_string(num_layers) +
                                                     " (the model's decoder layers), got " + std::to_string(pp));
  if (!partition.empty()) {
    if (static_cast<int64_t>(partition.size()) != pp)
      throw FieldError("pp_layer_partition", "expected one layer count per pipeline stage (" + std::to_string(pp) + "), got " +
                                                   std::to_string(partition.size()));
    int64_t sum = 0;
    for (const int64_t n : partition) {
      if (n < 0 || n > num_layers)
        throw FieldError("pp_layer_partition", "expected layer counts from 0 to " + std::to_string(num_layers) + ", got " +
                                                     std::to_string(n));
      sum += n;
    }
    if (sum != num_layers)
      throw FieldError("pp_layer_partition", "the layer counts add up to " + std::to_string(sum) + ", not the model's " +
                                                   std::to_string(num_layers) + " decoder layers (vLLM refuses this too)");
    return partition;
  }
  std::vector<int64_t> layers(static_cast<size_t>(pp), num_layers / pp);
  const int64_t remainder = num_layers % pp;
  for (int64_t i = 2; i < remainder + 2; ++i) ++layers[static_cast<size_t>(pp - i)];
  return layers;
}

std::vector<int64_t> pipeline_stage_layers_remainder_last(int64_t num_layers, int64_t pp) {
  std::vector<int64_t> layers = pipeline_stage_layers(num_layers, pp, {});  // checks pp
  std::fill(layers.begin(), layers.end(), num_layers / pp);
  layers.back() += num_layers % pp;
  return layers;
}

ModelSpec pipeline_stage_model(const ModelSpec& model, int64_t pp, int64_t stage, const std::vector<int64_t>& partition) {
  const std::vector<int64_t> counts = pipeline_stage_layers(static_cast<int64_t>(model.layers.size()), pp, partition);
  int64_t start = 0;
  for (int64_t s = 0; s < stage; ++s) start += counts[static_cast<size_t>(s)];
  ModelSpec m = model;
  m.layers.assign(model.layers.begin() + start, model.layers.begin() + start + counts[static_cast<size_t>(stage)]);
  m.num_layers = static_cast<int64_t>(m.layers.size());
  return m;
}

ParamCount count_parameters_per_stage_gpu(const ModelSpec& stage_model, int64_t tp, bool first, bool last) {
  ParamCount c = count_parameters_per_gpu(stage_model, tp);
  const int64_t vocab_matrix = c.embedding;  // one rank's share of vocab × hidden
  int64_t drop = 0;
  if (!first) {
    drop += c.embedding + c.vision;  // the vision tower feeds the first stage's embeddings
    c.embedding = 0;
    c.vision = 0;
  }
  if (!last) {
    drop += c.lm_head + stage_model.norm_params();  // LM head and final norm
    c.lm_head = 0;
    c.norms -= stage_model.norm_params();
  } else if (!first && stage_model.tie_word_embeddings) {
    c.lm_head = vocab_matrix;
    drop -= vocab_matrix;
  }
  c.total -= drop;
  c.active -= drop;
  return c;
}

}  // namespace kvcap
