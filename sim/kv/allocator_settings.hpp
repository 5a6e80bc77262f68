#pragma once
// The KV allocator a scenario picks (`engine.allocator`) with the settings only it has, as one
// typed value (parsed once by the scenario layer; the factory builds from it).
#include <string_view>
#include <variant>

#include "sim/kv/contiguous_allocator.hpp"

namespace kvcap {

struct PagedAllocation {};
struct ContiguousAllocation {
  ContiguousReserve reserve = ContiguousReserve::max_model_len;  ///< `engine.contiguous_reserve`
  ContiguousFit fit = ContiguousFit::first_fit;                  ///< `engine.contiguous_fit`
};

using AllocatorSettings = std::variant<PagedAllocation, ContiguousAllocation>;

inline constexpr const char* kAllocatorNames[] = {"paged", "contiguous"};
/// "paged" or "contiguous".
inline const char* allocator_name(const AllocatorSettings& a) { return kAllocatorNames[a.index()]; }
/// The allocator of that name with its defaults; FieldError("allocator") for another name.
AllocatorSettings allocator_named(std::string_view name);
inline bool is_paged(const AllocatorSettings& a) { return std::holds_alternative<PagedAllocation>(a); }

}  // namespace kvcap
