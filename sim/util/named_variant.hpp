#pragma once
// Settings that are "one of several kinds, each with its own fields" are std::variants whose
// alternatives line up with a table of names (scheduler, allocator): these helpers go from a
// name to the alternative's defaults and back without a chain of string comparisons.
#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace kvcap {

/// The alternative at `index`, default-constructed.
template <class Variant, size_t I = 0>
Variant variant_default_at(size_t index) {
  if constexpr (I + 1 < std::variant_size_v<Variant>) {
    if (index != I) return variant_default_at<Variant, I + 1>(index);
  }
  return Variant{std::in_place_index<I>};
}

/// The position of `name` in `names`, or nothing.
inline std::optional<size_t> name_index(std::string_view name, std::span<const char* const> names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (name == names[i]) return i;
  return std::nullopt;
}

/// The alternative named `name` in `names` (one name per alternative, in order), or nothing.
template <class Variant, size_t N>
std::optional<Variant> variant_named(std::string_view name, const char* const (&names)[N]) {
  static_assert(std::variant_size_v<Variant> == N, "one name per alternative");
  if (const auto i = name_index(name, names)) return variant_default_at<Variant>(*i);
  return std::nullopt;
}

/// "'a', 'b', 'c'": the names for an error message.
inline std::string quoted_names(std::span<const char* const> names) {
  std::string list;
  for (const char* n : names) list += (list.empty() ? "'" : ", '") + std::string(n) + "'";
  return list;
}

}  // namespace kvcap
