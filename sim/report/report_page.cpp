#include "sim/report/report_page.hpp"

#include <ostream>

#include "sim/report/html_text.hpp"

namespace kvcap::report {

void write_page_start(std::ostream& os, std::string_view title) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << escape_html(title)
     << "</title>\n<style>\n"
        "body{font-family:sans-serif;font-size:14px;color:#222;max-width:980px;margin:1em auto;padding:0 1em}\n"
        "h1{font-size:20px}h2{font-size:16px;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
        "table{border-collapse:collapse;margin:.5em 0;display:block;max-width:100%;overflow-x:auto}\n"
        "p,td,th,li{overflow-wrap:break-word}\n"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\n"
        "th{background:#f2f2f2}td.k,th.k{text-align:left}td.nw{white-space:nowrap}\n"
        ".banner{border:2px solid #c77c00;background:#fff4dc;padding:.6em;margin:1em 0}\n"
        ".note{color:#555;font-size:12px}\n"
        ".chart-wrap{max-width:100%;overflow-x:auto}\n"
        "svg.chart{width:100%;min-width:560px;max-width:900px;height:auto;display:block;margin:.5em 0}\n"
        "@media print{body{max-width:none}.chart,table{page-break-inside:avoid}}\n"
        "</style>\n</head>\n<body>\n";
}

void write_page_end(std::ostream& os) { os << "</body>\n</html>\n"; }

}  // namespace kvcap::report
