// No chart label overlaps another or leaves its chart (issue #17 part 5): every <text> of every
// <svg> in the reports, read back from the HTML, gets its box from its position, anchor, font
// size and length (0.6 em per character, the layout's own text model, sim/report/svg_chart.hpp),
// and no two boxes may intersect. Hand-made worst cases (long titles and legends, crowded
// markers, many bars with long labels) and the reports kvcap writes for real runs.
#include <doctest/doctest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report/svg_chart.hpp"
#include "tests/report/report_test_util.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap::report;

namespace {

struct LabelBox {
  std::string text;
  double x0, y0, x1, y1;
};

std::string attr(const std::string& tag, const std::string& name) {
  const std::regex re("\\s" + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(tag, m, re) ? m[1].str() : std::string();
}

size_t decoded_length(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') i = s.find(';', i);  // an entity is one character
    else if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    ++n;
  }
  return n;
}

/// Each <svg> of `html`: its viewBox size and the boxes of its unrotated labels.
struct SvgLabels {
  double width = 0, height = 0;
  std::vector<LabelBox> boxes;
  struct Dot {
    double x, y, r;
  };
  std::vector<Dot> dots;  ///< <circle>s (scatter and series points): centre and radius
};

std::vector<SvgLabels> svg_labels(const std::string& html) {
  std::vector<SvgLabels> out;
  const std::regex text_re("<text([^>]*)>([^<]*)</text>");
  const std::regex circle_re("<circle cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"(?: r=\"([0-9.]+)\")?");
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 4)) {
    const size_t end = html.find("</svg>", at);
    const std::string svg = html.substr(at, end - at);
    SvgLabels s;
    std::istringstream vb(attr(svg.substr(0, svg.find('>')), "viewBox"));
    double x = 0, y = 0;
    vb >> x >> y >> s.width >> s.height;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re); it != std::sregex_iterator(); ++it) {
      const std::string tag = (*it)[1].str();
      if (!attr(tag, "transform").empty()) continue;  // the rotated y-axis title
      const double font = attr(tag, "font-size").empty() ? 11 : std::stod(attr(tag, "font-size"));
      const double tx = std::stod(attr(tag, "x"));
      const double ty = std::stod(attr(tag, "y")) + (attr(tag, "dy").empty() ? 0 : std::stod(attr(tag, "dy")));
      const double w = 0.6 * font * static_cast<double>(decoded_length((*it)[2].str()));
      const std::string anchor = attr(tag, "text-anchor");
      const double x0 = anchor == "middle" ? tx - w / 2 : anchor == "end" ? tx - w : tx;
      s.boxes.push_back({(*it)[2].str(), x0, ty - 0.8 * font, x0 + w, ty + 0.25 * font});
    }
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle_re); it != std::sregex_iterator(); ++it)
      s.dots.push_back({std::stod((*it)[1].str()), std::stod((*it)[2].str()),
                        (*it)[3].matched ? std::stod((*it)[3].str()) : 0.0});
    out.push_back(std::move(s));
  }
  return out;
}

/// "" when no two labels overlap and all are inside their chart; else what collides.
std::string label_problems(const std::string& html) {
  std::string problems;
  constexpr double kSlack = 0.5;  // boxes touching at a shared edge do not overlap
  for (const SvgLabels& s : svg_labels(html)) {
    for (size_t i = 0; i < s.boxes.size(); ++i) {
      const LabelBox& a = s.boxes[i];
      if (a.x0 < -kSlack || a.y0 < -kSlack || a.x1 > s.width + kSlack || a.y1 > s.height + kSlack)
        problems += "outside the chart: '" + a.text + "'\n";
      for (size_t j = i + 1; j < s.boxes.size(); ++j) {
        const LabelBox& b = s.boxes[j];
        if (a.x0 + kSlack < b.x1 && b.x0 + kSlack < a.x1 && a.y0 + kSlack < b.y1 && b.y0 + kSlack < a.y1)
          problems += "'" + a.text + "' overlaps '" + b.text + "'\n";
      }
      // A label may not touch a circle: the nearest point of its box is farther than the radius.
      for (const auto& d : s.dots) {
        const double nx = std::clamp(d.x, a.x0, a.x1) - d.x, ny = std::clamp(d.y, a.y0, a.y1) - d.y;
        if ((d.r == 0 && d.x > a.x0 && d.x < a.x1 && d.y > a.y0 && d.y < a.y1) || (d.r > 0 && nx * nx + ny * ny < d.r * d.r))
          problems += "'" + a.text + "' covers a data point\n";
      }
    }
  }
  return problems;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("the checker finds what it is for") {
  CHECK(label_problems("<svg viewBox=\"0 0 100 50\"><text x=\"10\" y=\"20\">abcdef</text>"
                       "<text x=\"20\" y=\"22\">xyz</text></svg>") != "");
  CHECK(label_problems("<svg viewBox=\"0 0 100 50\"><text x=\"90\" y=\"20\">abcdef</text></svg>") != "");
  CHECK(label_problems("<svg viewBox=\"0 0 100 50\"><text x=\"10\" y=\"20\">ab</text>"
                       "<text x=\"10\" y=\"40\">cd</text></svg>") == "");
  // A label grazing a circle's edge (its centre 2 units below the box, radius 3.5) covers it.
  CHECK(label_problems("<svg viewBox=\"0 0 100 50\"><text x=\"10\" y=\"20\">abcdef</text>"
                       "<circle cx=\"20\" cy=\"24.75\" r=\"3.5\"></circle></svg>") != "");
  CHECK(label_problems("<svg viewBox=\"0 0 100 50\"><text x=\"10\" y=\"20\">abcdef</text>"
                       "<circle cx=\"20\" cy=\"30\" r=\"3.5\"></circle></svg>") == "");
}

TEST_CASE("line charts: a long title wraps, a long legend flows onto rows, crowded markers find free places") {
  Chart c;
  c.title = "Which wall: KV memory, compute, bandwidth or GPU time for a very long scenario name that runs on and on";
  c.x = Axis{"time (s)", 0, 100, 1};
  c.y = Axis{"% of capacity", 0, 1, 100};
  for (const char* label : {"KV blocks in use (fullest replica)", "KV blocks in use (all)", "KV tokens stored",
                            "GPU busy", "compute (share of reachable)", "memory bandwidth (share of reachable)",
                            "another series with a long name", "and one more"}) {
    Series s{label, "#123456", false, {}, false, {}, {}};
    for (int i = 0; i <= 100; i += 10) s.points.push_back({static_cast<double>(i), 0.05 * (i % 20) + 0.3});
    c.series.push_back(s);
  }
  c.markers.push_back(Marker{true, 50, "capacity 12.34 req/s", "#d62728"});
  c.markers.push_back(Marker{true, 52, "SLO 2 s", "#555555"});
  c.markers.push_back(Marker{false, 0.99, "goal 99.0%", "#555555"});
  c.markers.push_back(Marker{false, 0.97, "97%", "#555555"});
  std::ostringstream os;
  write_svg_chart(os, c);
  CHECK(label_problems(os.str()) == "");
  CHECK(kvcap::test::unbalanced_tags(os.str()) == "");
}

TEST_CASE("bar charts: long labels under and over many bars wrap instead of colliding") {
  BarChart c;
  c.title = "Cost per hour of the smallest deployment meeting the goal";
  c.y_label = "USD per hour";
  const char* gpus[] = {"h100-sxm", "h200", "b200", "rtx-4090", "a100-80gb", "l40s"};
  for (const char* g : gpus)
    for (int tp : {2, 4}) {
      Bar b;
      b.label = std::string(g) + " TP" + std::to_string(tp);
      if (tp == 4 && std::string(g) == "rtx-4090") {
        b.has_value = false;
        b.value_label = "not met with 64 replicas";
      } else {
        b.value = 10.0 * tp + static_cast<double>(std::string(g).size());
        b.value_label = "$" + std::to_string(static_cast<int>(b.value)) + ".00 (" + std::to_string(4 * tp) + " GPUs)";
      }
      c.bars.push_back(b);
    }
  std::ostringstream os;
  write_svg_bar_chart(os, c);
  CHECK(label_problems(os.str()) == "");
}

TEST_CASE("scatter charts: crowded labelled points find free places or their short label, never overlap") {
  Chart c;
  c.title = "Throughput per GPU vs throughput per user, at capacity";
  c.x = Axis{"output tokens/s per user", 0, 100, 1};
  c.y = Axis{"output tokens/s per GPU", 0, 1000, 1};
  Series line{"Pareto frontier", "#d62728", false, {}, false, {}, {}};
  for (int i = 0; i < 24; ++i) {
    ScatterPoint p;
    p.x = 10 + 3.5 * i;
    p.y = 900 - 30 * i + (i % 3) * 15;
    p.label = "max_num_seqs=" + std::to_string(8 << (i % 6)) + " kv_cache_dtype=fp8";
    p.short_label = "#" + std::to_string(i);
    p.css_class = "pareto-frontier";
    line.points.push_back({p.x, p.y});
    c.scatter.push_back(p);
  }
  c.series.push_back(line);
  std::ostringstream os;
  write_svg_chart(os, c);
  CHECK(label_problems(os.str()) == "");
  CHECK(kvcap::test::unbalanced_tags(os.str()) == "");
}

TEST_CASE("the reports kvcap writes have no overlapping labels") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kvcap-labels-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string bin = std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' ";
  struct Job {
    const char* args;
    const char* out;
    const char* file;
  };
  const Job jobs[] = {
      {"run scenarios/basic-roofline.json --set workload.duration_s=20", "run1", "report.html"},
      {"run scenarios/replay/mooncake-conversation.json --set horizon_s=300", "run4", "report.html"},
      {"search scenarios/basic-roofline.json --set workload.duration_s=10 --precision 0.1 --seeds 1 --quiet", "search",
       "search.html"},
      {"search scenarios/basic-roofline.json --set workload.duration_s=10 --precision 0.1 --seeds 3 --quiet",
       "search-seeds", "search.html"},
      {"search --min-replicas --model llama-3.1-70b --gpu h100,h200,b200 --tp 2,4,8 --max-model-len 8192 --isl 2000 "
       "--osl 300 --request-rate 15 --num-prompts 150 --ttft-p99 2 --tpot-p99 0.1 --quiet",
       "sizing", "search.html"},
      {"search --min-replicas --model llama-3.1-8b --gpu h100,h200,l40s,rtx-4090 --tp 1,2 --max-model-len 8192 --isl 2000 "
       "--osl 300 --request-rate 15 --num-prompts 120 --ttft-p99 2 --tpot-p99 0.1 --quiet",
       "procurement", "sizing.html"},
      {"sweep scenarios/basic-roofline.json --set workload.duration_s=8 --grid engine.max_num_seqs=8,16,32,64,128 "
       "--grid engine.kv_cache_dtype=auto,fp8 --capacity --precision 0.2 --seeds 1 --quiet",
       "sweep", "sweep.html"},
  };
  for (const Job& j : jobs) {
    // Under the sanitizers the first run report and the procurement report (the code paths no
    // other report test drives) are enough; the Release pass reads all of them.
    if (KVCAP_SANITIZED && std::string(j.out) != "run1" && std::string(j.out) != "procurement") continue;
    CAPTURE(j.args);
    const auto r = cli_test::run_command(bin + j.args + " --out '" + (dir / j.out).string() + "' >/dev/null 2>&1");
    REQUIRE(r.code == 0);
    const std::string html = slurp(dir / j.out / j.file);
    CHECK(html.find("<svg") != std::string::npos);
    CHECK(label_problems(html) == "");
  }
  fs::remove_all(dir);
}

TEST_CASE("wrap_text: at spaces, and inside a word too wide for the line after its '-'") {
  // 11 px text is 6.6 units a character: 44 units hold 6.
  CHECK(wrap_text("a100-80gb TP2", 44, 11) == std::vector<std::string>{"a100-", "80gb", "TP2"});
  CHECK(wrap_text("h200 TP2", 60, 11) == std::vector<std::string>{"h200 TP2"});
  CHECK(wrap_text("abcdefghijkl", 40, 11) == std::vector<std::string>{"abcdef", "ghijkl"});
  CHECK(wrap_text("", 40, 11) == std::vector<std::string>{""});
  CHECK(text_width("ab", 10) == doctest::Approx(12));
  CHECK(text_width("é", 10) == doctest::Approx(6));  // one character, two bytes
}
