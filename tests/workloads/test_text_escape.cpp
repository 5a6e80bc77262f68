// The one way messages quote input text (sim/util/text.hpp): control bytes escaped, valid UTF-8
// kept, at most 40 characters with an ellipsis.
#include <doctest/doctest.h>

#include <string>

#include "sim/util/text.hpp"

using namespace kvcap;

TEST_CASE("escape_text: control bytes become visible, valid UTF-8 stays, escaping twice changes nothing") {
  CHECK(escape_text("plain text, 'quotes' and \\ backslash") == "plain text, 'quotes' and \\ backslash");
  CHECK(escape_text("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(escape_text("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(escape_text(std::string("nul\0bel\a del\x7f", 13)) == "nul\\x00bel\\x07 del\\x7f");
  CHECK(escape_text("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(escape_text("\xC2\x9B" "31m") == "\\xc2\\x9b31m");        // C1 CSI: a terminal escape too
  CHECK(escape_text("bad \xff \xC3 end") == "bad \\xff \\xc3 end");  // not UTF-8
  CHECK(escape_text("\xED\xA0\x80") == "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  CHECK(escape_text("\xE2\x82") == "\\xe2\\x82");                     // cut-off sequence
  const std::string once = escape_text("x\x1b\n\xff\xC2\x85y");
  CHECK(escape_text(once) == once);
}

TEST_CASE("excerpt and quote_input: at most 40 characters, escaped, with an ellipsis when cut") {
  CHECK(excerpt("short") == "short");
  CHECK(excerpt(std::string(40, 'a')) == std::string(40, 'a'));
  CHECK(excerpt(std::string(41, 'a')) == std::string(40, 'a') + "...");
  CHECK(excerpt(std::string(100, 's')).size() == 43);
  CHECK(excerpt("a\x1b" "b", 2) == "a\\x1b...");  // an escaped byte counts as one character
  // Multi-byte characters are never cut in half.
  std::string euros;
  for (int i = 0; i < 50; ++i) euros += "\xE2\x82\xAC";
  std::string want;
  for (int i = 0; i < 40; ++i) want += "\xE2\x82\xAC";
  CHECK(excerpt(euros) == want + "...");
  CHECK(quote_input("v\x1b[31m") == "'v\\x1b[31m'");
}
