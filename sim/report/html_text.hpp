#pragma once
// Text for the HTML reports: escaping of user input (scenario names, class names, reasons) and
// fixed-format numbers, so that the same run always gives the same bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvcap::report {

/// `s` with & < > " ' replaced by entities: safe both as element text and inside a quoted
/// attribute value.
std::string escape_html(std::string_view s);

/// printf("%.*f", decimals, v); "-" for NaN or infinity.
std::string fixed(double v, int decimals);

/// A fraction as a percentage with one decimal: 0.1234 -> "12.3%".
std::string percent(double fraction);

/// Up to `significant` significant digits (printf %.Ng), "-" for NaN or infinity.
std::string sig(double v, int significant = 4);

/// A results.json value for a table cell: "-" for null or absent, integers in full, other
/// numbers with 4 significant digits (whole numbers from 10000 up), strings escaped, booleans as yes/no.
std::string cell(const nlohmann::ordered_json& v);

/// The same cells from RunResults' typed figures (sim/results/run_results.hpp), which results.json
/// prints: NaN and nullopt (null there) as "-".
std::string cell(int64_t v);
std::string cell(uint64_t v);
std::string cell(double v);
std::string cell(const std::optional<double>& v);
std::string cell(bool v);
std::string cell(const std::string& v);
/// A fraction as percent(), "-" where results.json gives null (NaN, nullopt).
std::string percent_cell(double fraction);
std::string percent_cell(const std::optional<double>& fraction);

/// Looks up `a.b.c` in a results document without throwing; null when any step is missing.
const nlohmann::ordered_json& at_path(const nlohmann::ordered_json& doc, std::string_view dotted_path);

}  // namespace kvcap::report
