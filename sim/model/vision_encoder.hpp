#pragma once
// Parameter counts of the vision encoders vLLM loads with a vision-language checkpoint.
#include <cstdint>
#include <string>

#include "sim/model/model_spec.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

struct VisionEncoderCount {
  int64_t params = 0;  ///< encoder + projector into the text model, in the model dtype
  bool known = false;  ///< false: an encoder kvcap does not count (params 0), `type` says which
  std::string type;    ///< vision_config.model_type
  VisionProfileShape profile;  ///< what vLLM's startup profiling runs through it (patches 0 = not modelled)
};

/// Counts the encoder described by `root`'s vision_config (with the projector that maps it to a
/// text model of width `text_hidden`) for the encoders kvcap knows: pixtral (Mistral 3),
/// llama4_vision_model (Llama 4), qwen2_vl, qwen2_5_vl, qwen3_vl / qwen3_vl_moe (Qwen3-VL), siglip_vision_model
/// (Gemma 3), gemma4_vision (Gemma 4). Shapes are read strictly
/// (InputErrors name the key); an unknown model_type returns known = false. `default_type` is
/// the tower a wrapper implies where vision_config names no model_type (Qwen2-VL, Qwen2.5-VL).
VisionEncoderCount count_vision_encoder(const JsonObjectReader& root, int64_t text_hidden,
                                        const std::string& default_type = "");

}  // namespace kvcap
