#include "sim/report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

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

void write_polyline(std::ostream& os, const Chart& c, const Series& s) {
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

void write_svg_chart(std::ostream& os, const Chart& c) {
  const PlotFrame& f = c.frame;
  const double left = f.plot_left, right = f.plot_left + f.plot_width;
  const double top = f.plot_top, bottom = f.plot_top + f.plot_height;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " << px(f.width) << ' '
     << px(f.height) << "\" width=\"" << px(f.width) << "\" height=\"" << px(f.height)
     << "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n";
  os << "<title>" << escape_html(c.title) << "</title>\n";
  os << "<text x=\"" << px(left) << "\" y=\"14\" font-size=\"13\" font-weight=\"bold\">" << escape_html(c.title)
     << "</text>\n";

  // Legend: one row under the title.
  double lx = left;
  for (const Series& s : c.series) {
    os << "<line x1=\"" << px(lx) << "\" y1=\"26\" x2=\"" << px(lx + 18) << "\" y2=\"26\" stroke=\""
       << escape_html(s.color) << "\" stroke-width=\"2\"" << (s.dashed ? " stroke-dasharray=\"6 3\"" : "")
       << "></line>\n";
    os << "<text x=\"" << px(lx + 22) << "\" y=\"30\">" << escape_html(s.label) << "</text>\n";
    lx += 30 + 6.2 * static_cast<double>(s.label.size());
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

  for (const Marker& m : c.markers) {
    if (m.vertical) {
      const std::string x = px(to_px_x(f, c.x, m.value));
      os << "<line x1=\"" << x << "\" y1=\"" << px(top) << "\" x2=\"" << x << "\" y2=\"" << px(bottom)
         << "\" stroke=\"" << escape_html(m.color) << "\" stroke-dasharray=\"2 3\" stroke-width=\"1.5\"></line>\n";
      os << "<text x=\"" << px(to_px_x(f, c.x, m.value) + 3) << "\" y=\"" << px(top + 12) << "\" fill=\"" << escape_html(m.color)
         << "\">" << escape_html(m.label) << "</text>\n";
    } else {
      const std::string y = px(to_px_y(f, c.y, m.value));
      os << "<line x1=\"" << px(left) << "\" y1=\"" << y << "\" x2=\"" << px(right) << "\" y2=\"" << y
         << "\" stroke=\"" << escape_html(m.color) << "\" stroke-dasharray=\"2 3\" stroke-width=\"1.5\"></line>\n";
      os << "<text x=\"" << px(right) << "\" y=\"" << y << "\" dy=\"-3\" text-anchor=\"end\" fill=\""
         << escape_html(m.color) << "\">" << escape_html(m.label) << "</text>\n";
    }
  }
  os << "</svg>\n";
}

}  // namespace kvcap::report

namespace kvcap::report {

void write_svg_bar_chart(std::ostream& os, const BarChart& c) {
  const PlotFrame& f = c.frame;
  const double left = f.plot_left, right = f.plot_left + f.plot_width;
  const double top = f.plot_top, bottom = f.plot_top + f.plot_height;
  double highest = 0;
  for (const Bar& b : c.bars)
    if (b.has_value && std::isfinite(b.value)) highest = std::max(highest, b.value);
  const Axis y{c.y_label, 0, nice_axis_max(highest), 1};
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " << px(f.width) << ' '
     << px(f.height) << "\" width=\"" << px(f.width) << "\" height=\"" << px(f.height)
     << "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n";
  os << "<title>" << escape_html(c.title) << "</title>\n";
  os << "<text x=\"" << px(left) << "\" y=\"14\" font-size=\"13\" font-weight=\"bold\">" << escape_html(c.title)
     << "</text>\n";
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
  const double slot = c.bars.empty() ? f.plot_width : f.plot_width / static_cast<double>(c.bars.size());
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
    os << "<text x=\"" << px(mid) << "\" y=\"" << px(label_y) << "\" text-anchor=\"middle\">"
       << escape_html(b.value_label) << "</text>\n";
    os << "<text x=\"" << px(mid) << "\" y=\"" << px(bottom + 17) << "\" text-anchor=\"middle\">"
       << escape_html(b.label) << "</text>\n";
  }
  os << "</svg>\n";
}

}  // namespace kvcap::report
