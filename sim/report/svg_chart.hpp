#pragma once
// A small line-chart writer for the HTML reports: one <svg> per chart with a fixed plot box,
// axes with "nice" ticks labelled in units, a legend, one polyline per series, and optional
// vertical or horizontal marker lines (an SLO threshold, a goal). Coordinates are printed with
// one decimal, so equal inputs give equal bytes.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/downsample.hpp"

namespace kvcap::report {

/// Geometry shared by every chart, in SVG user units (pixels at 100% zoom). The plot box is
/// the area inside the axes: x from plot_left to plot_left + plot_width, y from plot_top
/// (the axis maximum) down to plot_top + plot_height (the axis minimum).
struct PlotFrame {
  double width = 720;
  double height = 290;
  double plot_left = 60;
  double plot_top = 40;
  double plot_width = 600;
  double plot_height = 200;
};

/// An axis range and how its labels read.
struct Axis {
  std::string label;   ///< with its unit, e.g. "time (s)"
  double min = 0;
  double max = 1;
  double label_scale = 1;  ///< tick labels show value × label_scale (1 → 100 for percent)
};

struct Series {
  std::string label;
  std::string color;  ///< an SVG colour, e.g. "#1f77b4"
  bool dashed = false;
  std::vector<Point> points;  ///< in data units, already bounded in number
  bool dots = false;          ///< also mark each point with a small circle (few-point series)
  /// A dense series drawn as its mean line (points) over a light band from band_lo to band_hi
  /// (each bucket's lowest and highest point, sim/report/downsample.hpp): empty = no band.
  std::vector<Point> band_lo, band_hi;
};

/// A straight reference line across the plot at a data value.
struct Marker {
  bool vertical = true;  ///< at x = value (else at y = value)
  double value = 0;
  std::string label;
  std::string color = "#555555";
};

/// A point drawn on its own (a scatter plot): a circle, optionally labelled.
struct ScatterPoint {
  double x = 0, y = 0;         ///< in data units
  std::string color = "#1f77b4";
  bool dim = false;            ///< drawn smaller and faint (e.g. a dominated point)
  std::string label;           ///< placed at a free place beside the point; "" none
  std::string short_label;     ///< tried where `label` finds no free place ("" none)
  std::string title;           ///< the circle's tooltip
  std::string css_class;       ///< the circle's class attribute ("" none)
};

struct Chart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Marker> markers;
  std::vector<ScatterPoint> scatter;  ///< drawn over the series
  PlotFrame frame;
};

/// Pixel x of a data value: plot_left + plot_width × (v − min) / (max − min).
double to_px_x(const PlotFrame& f, const Axis& a, double v);
/// Pixel y of a data value: plot_top + plot_height × (1 − (v − min) / (max − min)).
double to_px_y(const PlotFrame& f, const Axis& a, double v);

/// Tick values from min to max at a 1, 2 or 5 × 10^k step giving about `target` intervals
/// (only ticks inside [min, max], which always include min when it is a multiple of the step).
std::vector<double> nice_ticks(double min, double max, int target = 5);

/// An axis maximum for data peaking at v: v rounded up to the tick step nice_ticks(0, v) uses
/// (31 → 40, 4.2 → 5, 0.3 → 0.3); 1 for v <= 0.
double nice_axis_max(double v);

/// One bar of a bar chart; a bar without a value shows only its note (e.g. "does not fit").
struct Bar {
  std::string label;        ///< under the bar
  double value = 0;
  bool has_value = true;
  std::string value_label;  ///< above the bar (or in its place when !has_value)
  std::string color = "#1f77b4";
};

struct BarChart {
  std::string title;
  std::string y_label;  ///< with its unit
  std::vector<Bar> bars;
  PlotFrame frame;
};

/// Writes a vertical bar chart as one <svg> element; the y axis runs from 0 to
/// nice_axis_max(largest value) and bars share the plot width equally.
void write_svg_bar_chart(std::ostream& os, const BarChart& chart);

/// Writes the chart as one <svg> element (no XML prolog, for inline use in HTML). Values outside
/// the axis range are clamped to the plot box edge. Text never overlaps other text: a long
/// title wraps, the legend flows onto more rows (the plot moves down and the chart grows), and
/// marker labels take the first free place beside their line, off the series' points; a
/// scatter point's label takes the first free place around it (nearest first), else its short
/// label does, else it is left out (the circle keeps its tooltip).
void write_svg_chart(std::ostream& os, const Chart& chart);

/// Width of a text in SVG units at `font_px`: 0.6 em per character (sans-serif's average is
/// about 0.55 em; the margin keeps capitals and digits inside the box). Used for every layout
/// decision, and by the tests that check no two labels overlap.
double text_width(std::string_view text, double font_px);

/// `text` broken at spaces into lines no wider than `max_px`; a word wider than that is cut
/// (after a '-' where possible).
std::vector<std::string> wrap_text(const std::string& text, double max_px, double font_px);

}  // namespace kvcap::report
