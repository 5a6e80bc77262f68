#pragma once
// The frame every kvcap HTML report shares: doctype, inline stylesheet (screen and print), and
// the closing tags. Internal to sim/report.
#include <iosfwd>
#include <string_view>

namespace kvcap::report {

/// Opens the document up to and including <body>; `title` is escaped here.
void write_page_start(std::ostream& os, std::string_view title);
/// Closes <body> and <html>.
void write_page_end(std::ostream& os);

/// Line colours, distinguishable in colour and in greyscale print.
inline constexpr const char* kColorKv = "#d62728";
inline constexpr const char* kColorKvStored = "#ff9896";
inline constexpr const char* kColorCompute = "#1f77b4";
inline constexpr const char* kColorBandwidth = "#2ca02c";
inline constexpr const char* kColorBusy = "#9467bd";
inline constexpr const char* kColorRunning = "#1f77b4";
inline constexpr const char* kColorWaiting = "#ff7f0e";
inline constexpr const char* kColorPreempt = "#d62728";
inline constexpr const char* kColorFinished = "#2ca02c";
inline constexpr const char* kColorSlo = "#7f7f7f";
/// For several lines of one kind (classes): cycled in order.
inline constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};

}  // namespace kvcap::report
