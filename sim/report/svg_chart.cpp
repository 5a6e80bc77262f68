#include "sim/report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/report/html_text.hpp"

namespace kvcap::report {

namespace {

double span_of(const Axis& a) { return a.max > a.min ? a.max - a.min : 1.0; }

double clamp01(double t) { return std::clamp(t, 0.0, 1.0); }

std::string px(double v) { return fixed(v, 1); }

double tick_step(double min, double max, int target) {
  const double raw = (max - min) / std::max(target, 1);
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

/// Decimals needed to print multiples of `step` exactly enough (0.25 → 2, 5 → 0).
int decimals_for(double step) {
  int d = 0;
  while (d < 9 && std::fabs(step * std::pow(10.0, d) - std::round(step * std::pow(10.0, d))) > 1e-6) ++d;
  return d;
}

/// A text's box in SVG units (x0 left, y0 top), from its anchor point and baseline.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool contains(double x, double y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

/// anchor: 's' start, 'm' middle, 'e' end; y is the baseline.
Box text_box(const std::string& text, double x, double y, char anchor, double font_px) {
  const double w = text_width(text, font_px);
  const double x0 = anchor == 's' ? x : anchor == 'm' ? x - w / 2 : x - w;
  return Box{x0, y - 0.8 * font_px, x0 + w, y + 0.25 * font_px};
}

const char* anchor_attr(char anchor) { return anchor == 's' ? "start" : anchor == 'm' ? "middle" : "end"; }

void write_text(std::ostream& os, const std::string& text, double x, double y, char anchor, const std::string& extra = "") {
  os << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\"";
  if (anchor != 's') os << " text-anchor=\"" << anchor_attr(anchor) << "\"";
  os << extra << ">" << escape_html(text) << "</text>\n";
}

void write_band(std::ostream& os, const Chart& c, const Series& s) {
  if (s.band_lo.empty() || s.band_hi.empty()) return;
  os << "<polygon fill=\"" << escape_html(s.color) << "\" fill-opacity=\"0.18\" stroke=\"none\" points=\"";
  bool first = true;
  auto emit = [&](const Point& p) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return;
    if (!first) os << ' ';
    first = false;
    os << px(to_px_x(c.frame, c.x, p.x)) << ',' << px(to_px_y(c.frame, c.y, p.y));
  };
  for (const Point& p : s.band_hi) emit(p);
  for (auto it = s.band_lo.rbegin(); it != s.band_lo.rend(); ++it) emit(*it);
  os << "\"><title>" << escape_html("min-max of " + s.label) << "</title></polygon>\n";
}

void write_polyline(std::ostream& os, const Chart& c, const Series& s) {
  write_band(os, c, s);
  if (s.points.empty()) return;
  os << "<polyline fill=\"none\" stroke=\"" << escape_html(s.color) << "\" stroke-width=\"1.5\"";
  if (s.dashed) os << " stroke-dasharray=\"6 3\"";
  os << " points=\"";
  bool first = true;
  for (const Point& p : s.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    if (!first) os << ' ';
    first = false;
    os << px(to_px_x(c.frame, c.x, p.x)) << ',' << px(to_px_y(c.frame, c.y, p.y));
  }
  os << "\"><title>" << escape_html(s.label) << "</title></polyline>\n";
  if (!s.dots) return;
  for (const Point& p : s.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    os << "<circle cx=\"" << px(to_px_x(c.frame, c.x, p.x)) << "\" cy=\"" << px(to_px_y(c.frame, c.y, p.y))
       << "\" r=\"3\" fill=\"" << escape_html(s.color) << "\"></circle>\n";
  }
}

}  // namespace

double to_px_x(const PlotFrame& f, const Axis& a, double v) {
  return f.plot_left + f.plot_width * clamp01((v - a.min) / span_of(a));
}

double to_px_y(const PlotFrame& f, const Axis& a, double v) {
  return f.plot_top + f.plot_height * (1.0 - clamp01((v - a.min) / span_of(a)));
}

std::vector<double> nice_ticks(double min, double max, int target) {
  std::vector<double> ticks;
  if (!(max > min) || !std::isfinite(min) || !std::isfinite(max)) return {min};
  const double step = tick_step(min, max, target);
  const double first = std::ceil(min / step - 1e-9);
  for (double k = first;; k += 1) {
    const double t = k * step;
    if (t > max + step * 1e-9) break;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (ticks.size() > 100) break;  // defensive: never an endless axis
  }
  return ticks;
}

double nice_axis_max(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1;
  const double step = tick_step(0, v, 5);
  return std::ceil(v / step - 1e-9) * step;
}

double text_width(std::string_view text, double font_px) {
  size_t chars = 0;
  for (unsigned char ch : text)
    if ((ch & 0xC0) != 0x80) ++chars;  // UTF-8: count code points, not bytes
  return 0.6 * font_px * static_cast<double>(chars);
}

std::vector<std::string> wrap_text(const std::string& text, double max_px, double font_px) {
  std::vector<std::string> lines;
  std::string line, word;
  const auto fits = [&](const std::string& t) { return text_width(t, font_px) <= max_px; };
  auto flush_word = [&] {
    if (word.empty()) return;
    // A word wider than the line is cut, after a '-' where one fits ("a100-" / "80gb"), else
    // where the line ends (ASCII: identifiers and numbers are what run long here).
    while (!fits(word) && word.size() > 1) {
      if (!line.empty()) {
        lines.push_back(line);
        line.clear();
      }
      size_t cut = 1;
      while (cut < word.size() && fits(word.substr(0, cut + 1))) ++cut;
      if (const size_t dash = word.rfind('-', cut - 1); dash != std::string::npos && dash > 0 && dash + 1 < cut)
        cut = dash + 1;
      lines.push_back(word.substr(0, cut));
      word.erase(0, cut);
    }
    const std::string joined = line.empty() ? word : line + " " + word;
    if (!line.empty() && text_width(joined, font_px) > max_px) {
      lines.push_back(line);
      line = word;
    } else {
      line = joined;
    }
    word.clear();
  };
  for (char ch : text) {
    if (ch == ' ') flush_word();
    else word += ch;
  }
  flush_word();
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

void write_svg_chart(std::ostream& os, const Chart& chart) {
  constexpr double kFont = 11, kTitleFont = 13, kRow = 14;
  // Layout first: the title's lines and the legend's rows push the plot box down.
  Chart c = chart;
  PlotFrame& f = c.frame;
  const double text_right = f.width - 4;
  const std::vector<std::string> title = wrap_text(c.title, text_right - f.plot_left, kTitleFont);
  struct LegendEntry {
    const Series* s;
    double x, baseline;
  };
  std::vector<LegendEntry> legend;
  double lx = f.plot_left, row_baseline = 14 + kRow * static_cast<double>(title.size() - 1) + 16;
  for (const Series& s : c.series) {
    const double w = 22 + text_width(s.label, kFont);
    if (lx > f.plot_left && lx + w > text_right) {
      lx = f.plot_left;
      row_baseline += kRow;
    }
    legend.push_back({&s, lx, row_baseline});
    lx += w + 12;
  }
  const double shift = std::max(0.0, (legend.empty() ? row_baseline - kRow : row_baseline) + 10 - f.plot_top);
  f.plot_top += shift;
  f.height += shift;
  const double left = f.plot_left, right = f.plot_left + f.plot_width;
  const double top = f.plot_top, bottom = f.plot_top + f.plot_height;
  std::vector<Box> placed;  // every label drawn so far (tick labels excepted: they own their band)

  // In a scrolling box: on a narrow screen the chart keeps a readable size and scrolls sideways
  // instead of shrinking its text to specks (report_page.cpp's CSS).
  os << "<div class=\"chart-wrap\">\n";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " << px(f.width) << ' '
     << px(f.height) << "\" width=\"" << px(f.width) << "\" height=\"" << px(f.height)
     << "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n";
  os << "<title>" << escape_html(c.title) << "</title>\n";
  for (size_t i = 0; i < title.size(); ++i) {
    const double y = 14 + kRow * static_cast<double>(i);
    os << "<text x=\"" << px(left) << "\" y=\"" << px(y) << "\" font-size=\"13\" font-weight=\"bold\">"
       << escape_html(title[i]) << "</text>\n";
    placed.push_back(text_box(title[i], left, y, 's', kTitleFont));
  }
  for (const LegendEntry& e : legend) {
    const Series& s = *e.s;
    os << "<line x1=\"" << px(e.x) << "\" y1=\"" << px(e.baseline - 4) << "\" x2=\"" << px(e.x + 18) << "\" y2=\""
       << px(e.baseline - 4) << "\" stroke=\"" << escape_html(s.color) << "\" stroke-width=\"2\""
       << (s.dashed ? " stroke-dasharray=\"6 3\"" : "") << "></line>\n";
    write_text(os, s.label, e.x + 22, e.baseline, 's');
    placed.push_back(text_box(s.label, e.x + 22, e.baseline, 's', kFont));
  }

  // Grid and tick labels.
  const auto xt = nice_ticks(c.x.min, c.x.max);
  const auto yt = nice_ticks(c.y.min, c.y.max);
  const int xd = decimals_for(tick_step(c.x.min, c.x.max, 5) * c.x.label_scale);
  const int yd = decimals_for(tick_step(c.y.min, c.y.max, 5) * c.y.label_scale);
  for (double t : yt) {
    const std::string y = px(to_px_y(f, c.y, t));
    os << "<line x1=\"" << px(left) << "\" y1=\"" << y << "\" x2=\"" << px(right) << "\" y2=\"" << y
       << "\" stroke=\"#e4e4e4\"></line>\n";
    os << "<text x=\"" << px(left - 6) << "\" y=\"" << y << "\" dy=\"4\" text-anchor=\"end\">"
       << fixed(t * c.y.label_scale, yd) << "</text>\n";
  }
  for (double t : xt) {
    const std::string x = px(to_px_x(f, c.x, t));
    os << "<line x1=\"" << x << "\" y1=\"" << px(bottom) << "\" x2=\"" << x << "\" y2=\"" << px(bottom + 5)
       << "\" stroke=\"#333333\"></line>\n";
    os << "<text x=\"" << x << "\" y=\"" << px(bottom + 17) << "\" text-anchor=\"middle\">"
       << fixed(t * c.x.label_scale, xd) << "</text>\n";
  }
  // Axes.
  os << "<polyline fill=\"none\" stroke=\"#333333\" points=\"" << px(left) << ',' << px(top) << ' ' << px(left) << ','
     << px(bottom) << ' ' << px(right) << ',' << px(bottom) << "\"></polyline>\n";
  os << "<text x=\"" << px((left + right) / 2) << "\" y=\"" << px(bottom + 34) << "\" text-anchor=\"middle\">"
     << escape_html(c.x.label) << "</text>\n";
  os << "<text transform=\"translate(14 " << px((top + bottom) / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
     << escape_html(c.y.label) << "</text>\n";

  for (const Series& s : c.series) write_polyline(os, c, s);
  for (const ScatterPoint& p : c.scatter) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    os << "<circle cx=\"" << px(to_px_x(f, c.x, p.x)) << "\" cy=\"" << px(to_px_y(f, c.y, p.y)) << "\" r=\""
       << (p.dim ? "3.5" : "4.5") << "\" fill=\"" << escape_html(p.color) << "\""
       << (p.dim ? " fill-opacity=\"0.3\"" : " stroke=\"#ffffff\" stroke-width=\"1\"");
    if (!p.css_class.empty()) os << " class=\"" << escape_html(p.css_class) << "\"";
    os << ">";
    if (!p.title.empty()) os << "<title>" << escape_html(p.title) << "</title>";
    os << "</circle>\n";
  }

  // Marker labels: the first candidate place inside the plot that overlaps no label and covers
  // no point of a series (a label on the curve hides the curve).
  // The lines as pixels every 3 units along each segment: a label between two points can still
  // sit on the line joining them.
  std::vector<std::pair<double, double>> drawn;
  for (const Series& s : c.series) {
    bool have_prev = false;
    double px0 = 0, py0 = 0;
    for (const Point& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      const double x1 = to_px_x(f, c.x, p.x), y1 = to_px_y(f, c.y, p.y);
      if (have_prev) {
        const double len = std::hypot(x1 - px0, y1 - py0);
        const int steps = std::min(400, static_cast<int>(len / 3));
        for (int k = 1; k < steps; ++k) {
          const double t = static_cast<double>(k) / steps;
          drawn.emplace_back(px0 + t * (x1 - px0), py0 + t * (y1 - py0));
        }
      }
      drawn.emplace_back(x1, y1);
      px0 = x1, py0 = y1, have_prev = true;
    }
  }
  // Scatter circles: no label may touch one (its box keeps a pixel clear of the circle's edge).
  struct Dot {
    double x, y, r;
  };
  std::vector<Dot> dots;
  for (const ScatterPoint& p : c.scatter)
    if (std::isfinite(p.x) && std::isfinite(p.y))
      dots.push_back({to_px_x(f, c.x, p.x), to_px_y(f, c.y, p.y), (p.dim ? 3.5 : 4.5) + 1});
  auto touches_dot = [&](const Box& b) {
    for (const Dot& d : dots) {
      const double nx = std::clamp(d.x, b.x0, b.x1) - d.x, ny = std::clamp(d.y, b.y0, b.y1) - d.y;
      if (nx * nx + ny * ny < d.r * d.r) return true;
    }
    return false;
  };
  auto free_at = [&](const Box& b) {
    if (b.x0 < left || b.x1 > right || b.y0 < top || b.y1 > bottom) return false;
    for (const Box& o : placed)
      if (b.overlaps(o)) return false;
    for (const auto& [x, y] : drawn)
      if (b.contains(x, y)) return false;
    return !touches_dot(b);
  };
  for (const Marker& m : c.markers) {
    struct Place {
      double x, y;
      char anchor;
    };
    std::vector<Place> candidates;
    if (m.vertical) {
      const double x = to_px_x(f, c.x, m.value);
      for (double y = top + 12; y <= bottom - 3; y += kRow) {
        candidates.push_back({x + 3, y, 's'});
        candidates.push_back({x - 3, y, 'e'});
      }
      os << "<line x1=\"" << px(x) << "\" y1=\"" << px(top) << "\" x2=\"" << px(x) << "\" y2=\"" << px(bottom)
         << "\" stroke=\"" << escape_html(m.color) << "\" stroke-dasharray=\"2 3\" stroke-width=\"1.5\"></line>\n";
    } else {
      const double y = to_px_y(f, c.y, m.value);
      for (const double dy : {-3.0, 12.0})
        for (const char a : {'e', 's', 'm'})
          candidates.push_back({a == 'e' ? right - 2 : a == 's' ? left + 4 : (left + right) / 2, y + dy, a});
      os << "<line x1=\"" << px(left) << "\" y1=\"" << px(y) << "\" x2=\"" << px(right) << "\" y2=\"" << px(y)
         << "\" stroke=\"" << escape_html(m.color) << "\" stroke-dasharray=\"2 3\" stroke-width=\"1.5\"></line>\n";
    }
    Place chosen = candidates.front();
    bool found = false;
    for (const Place& p : candidates)
      if (free_at(text_box(m.label, p.x, p.y, p.anchor, kFont))) {
        chosen = p;
        found = true;
        break;
      }
    // Nothing free: the first place that at least overlaps no other label.
    if (!found)
      for (const Place& p : candidates) {
        const Box b = text_box(m.label, p.x, p.y, p.anchor, kFont);
        if (std::none_of(placed.begin(), placed.end(), [&](const Box& o) { return b.overlaps(o); })) {
          chosen = p;
          break;
        }
      }
    write_text(os, m.label, chosen.x, chosen.y, chosen.anchor, " fill=\"" + escape_html(m.color) + "\"");
    placed.push_back(text_box(m.label, chosen.x, chosen.y, chosen.anchor, kFont));
  }
  // Scatter labels: around the point, nearest places first; the short label where the label
  // finds no free place; where neither does, one that covers a line but no point or label;
  // else none.
  for (const ScatterPoint& p : c.scatter) {
    if (p.label.empty() || !std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const double x = to_px_x(f, c.x, p.x), y = to_px_y(f, c.y, p.y);
    struct Place {
      double x, y;
      char anchor;
    };
    std::vector<Place> candidates;
    for (const double d : {7.0, 14.0, 24.0, 36.0}) {
      candidates.push_back({x + d, y + 4, 's'});
      candidates.push_back({x - d, y + 4, 'e'});
      candidates.push_back({x, y - d + 2, 'm'});
      candidates.push_back({x, y + d + 8, 'm'});
      candidates.push_back({x + d * 0.7, y - d * 0.7, 's'});
      candidates.push_back({x - d * 0.7, y - d * 0.7, 'e'});
      candidates.push_back({x + d * 0.7, y + d * 0.7 + 8, 's'});
      candidates.push_back({x - d * 0.7, y + d * 0.7 + 8, 'e'});
    }
    auto no_clash = [&](const Box& b) {
      if (b.x0 < left || b.x1 > right || b.y0 < top || b.y1 > bottom) return false;
      for (const Box& o : placed)
        if (b.overlaps(o)) return false;
      return !touches_dot(b);
    };
    bool done = false;
    for (const auto& fits : {std::function<bool(const Box&)>(free_at), std::function<bool(const Box&)>(no_clash)}) {
      for (const std::string* text : {&p.label, &p.short_label}) {
        if (text->empty()) continue;
        for (const Place& q : candidates) {
          const Box b = text_box(*text, q.x, q.y, q.anchor, kFont);
          if (!fits(b)) continue;
          write_text(os, *text, q.x, q.y, q.anchor, " fill=\"#333333\"");
          placed.push_back(b);
          done = true;
          break;
        }
        if (done) break;
      }
      if (done) break;
    }
  }
  os << "</svg>\n</div>\n";
}

}  // namespace kvcap::report

namespace kvcap::report {

void write_svg_bar_chart(std::ostream& os, const BarChart& chart) {
  constexpr double kFont = 11, kLine = 13;
  BarChart c = chart;
  PlotFrame& f = c.frame;
  // Each bar gets at least 64 units ("$179.20" and "h100-sxm" fit on a line): many bars widen the
  // chart, which the page scales to its width.
  constexpr double kMinSlot = 64;
  if (const double need = kMinSlot * static_cast<double>(c.bars.size()); need > f.plot_width) {
    f.width += need - f.plot_width;
    f.plot_width = need;
  }
  const double slot = c.bars.empty() ? f.plot_width : f.plot_width / static_cast<double>(c.bars.size());
  // Every label wraps to its slot; the chart grows to hold the longest label under the bars, and
  // the value labels above the bars get the headroom their lines need.
  std::vector<std::vector<std::string>> names, values;
  size_t name_lines = 1, value_lines = 1;
  for (const Bar& b : c.bars) {
    names.push_back(wrap_text(b.label, slot - 6, kFont));
    values.push_back(wrap_text(b.value_label, slot - 6, kFont));
    name_lines = std::max(name_lines, names.back().size());
    value_lines = std::max(value_lines, values.back().size());
  }
  const std::vector<std::string> title = wrap_text(c.title, f.width - 4 - f.plot_left, 13);
  const double head = 14 + 14 * static_cast<double>(title.size() - 1) + kLine * static_cast<double>(value_lines) + 6;
  const double shift = std::max(0.0, head - f.plot_top);
  f.plot_top += shift;
  f.height += shift + kLine * static_cast<double>(name_lines - 1);
  const double left = f.plot_left, right = f.plot_left + f.plot_width;
  const double top = f.plot_top, bottom = f.plot_top + f.plot_height;
  double highest = 0;
  for (const Bar& b : c.bars)
    if (b.has_value && std::isfinite(b.value)) highest = std::max(highest, b.value);
  const Axis y{c.y_label, 0, nice_axis_max(highest), 1};
  // In a scrolling box: on a narrow screen the chart keeps a readable size and scrolls sideways
  // instead of shrinking its text to specks (report_page.cpp's CSS).
  os << "<div class=\"chart-wrap\">\n";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " << px(f.width) << ' '
     << px(f.height) << "\" width=\"" << px(f.width) << "\" height=\"" << px(f.height)
     << "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n";
  os << "<title>" << escape_html(c.title) << "</title>\n";
  for (size_t i = 0; i < title.size(); ++i)
    os << "<text x=\"" << px(left) << "\" y=\"" << px(14 + 14 * static_cast<double>(i))
       << "\" font-size=\"13\" font-weight=\"bold\">" << escape_html(title[i]) << "</text>\n";
  const int yd = decimals_for(tick_step(y.min, y.max, 5));
  for (double t : nice_ticks(y.min, y.max)) {
    const std::string ty = px(to_px_y(f, y, t));
    os << "<line x1=\"" << px(left) << "\" y1=\"" << ty << "\" x2=\"" << px(right) << "\" y2=\"" << ty
       << "\" stroke=\"#e4e4e4\"></line>\n";
    os << "<text x=\"" << px(left - 6) << "\" y=\"" << ty << "\" dy=\"4\" text-anchor=\"end\">" << fixed(t, yd)
       << "</text>\n";
  }
  os << "<polyline fill=\"none\" stroke=\"#333333\" points=\"" << px(left) << ',' << px(top) << ' ' << px(left) << ','
     << px(bottom) << ' ' << px(right) << ',' << px(bottom) << "\"></polyline>\n";
  os << "<text transform=\"translate(14 " << px((top + bottom) / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
     << escape_html(c.y_label) << "</text>\n";
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    const double x0 = left + slot * static_cast<double>(i);
    const double mid = x0 + slot / 2;
    double label_y = bottom - 4;
    if (b.has_value && std::isfinite(b.value)) {
      const double ty = to_px_y(f, y, b.value);
      os << "<rect x=\"" << px(x0 + slot * 0.2) << "\" y=\"" << px(ty) << "\" width=\"" << px(slot * 0.6)
         << "\" height=\"" << px(bottom - ty) << "\" fill=\"" << escape_html(b.color) << "\"><title>"
         << escape_html(b.label) << "</title></rect>\n";
      label_y = ty - 4;
    }
    // The value's lines end just above the bar (or the axis, for a bar without a value).
    const auto& v = values[i];
    for (size_t k = 0; k < v.size(); ++k)
      write_text(os, v[k], mid, label_y - kLine * static_cast<double>(v.size() - 1 - k), 'm');
    for (size_t k = 0; k < names[i].size(); ++k) write_text(os, names[i][k], mid, bottom + 17 + kLine * static_cast<double>(k), 'm');
  }
  os << "</svg>\n</div>\n";
}

}  // namespace kvcap::report
