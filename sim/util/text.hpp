#pragma once
// Text helpers every room needs, kept in one place so each has one definition.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvcap {

/// ASCII lower case (identifiers, GPU and model names); bytes ≥ 0x80 are left as they are.
std::string ascii_lower(std::string s);

/// One CSV field as RFC 4180 writes it: quoted (with quotes doubled) only when it holds a
/// comma, a quote or a line break.
/// %.9g (equal runs print byte-identical numbers), or "" for NaN and infinities.
std::string format_number(double v);

std::string csv_field(std::string_view s);

/// The whole of `text` as a finite number (strtod's syntax, nothing after it); nullopt for
/// anything else, an empty text, NaN or an infinity. For flags that take numbers in text.
std::optional<double> parse_finite_number(const std::string& text);

/// A number for people: plain notation, never an exponent, `significant` digits (at least the
/// whole part): 28970.4 -> "28970", 0.0047312 -> "0.004731", 2.5 -> "2.5"; "-" for NaN/inf.
std::string format_plain(double v, int significant = 4);

/// Text safe inside HTML or XML element content and quoted attributes: & < > " ' escaped.
std::string escape_markup(std::string_view s);

/// Bytes as GiB with two decimals and the unit: "12.34 GiB".
std::string gib_text(int64_t bytes);

/// A size as people write one: bytes ("1073741824") or with a binary suffix K, M, G, T (upper
/// or lower case, an optional "i" and "B": "8G", "512MiB", "1.5g"). InputError naming `flag`
/// for anything else, or for a size outside [1 MiB, 2^60].
int64_t parse_byte_size(const std::string& text, const std::string& flag);

/// printf's formatting into a string, for tables printed through std::cout (which reports why
/// a write failed; sim/util/exit_codes.hpp), checked by the compiler like printf.
std::string format_text(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Quoting input text in messages. Input files and flags can hold anything: terminal escapes
// (which a message printed to a terminal or CI log would execute), line breaks (which forge
// log lines), or a secret from a file that was never a trace. Every message that quotes input
// goes through these.

/// `s` with control bytes made visible: \n, \r and \t as such, other bytes below 0x20, 0x7f,
/// the C1 controls (U+0080..U+009F) and bytes that are not valid UTF-8 as \xNN. Valid UTF-8
/// otherwise stays as it is. Backslashes are kept, so escaping twice changes nothing.
std::string escape_text(std::string_view s);

/// How many characters of input a message quotes at most.
inline constexpr size_t kExcerptChars = 40;

/// At most `max_chars` characters (code points) of `s`, escaped, with "..." when cut: a short
/// excerpt of an input line or value for a message.
std::string excerpt(std::string_view s, size_t max_chars = kExcerptChars);

/// excerpt(s) in single quotes: "'value'".
std::string quote_input(std::string_view s, size_t max_chars = kExcerptChars);

/// Whether `s` is valid UTF-8 (no stray continuation bytes, overlong forms, surrogates or cut-off
/// sequences). Text that ends up in a JSON output must be: nlohmann refuses to write anything else
/// (type_error 316), so input text is checked where it enters, as an input error.
bool is_valid_utf8(std::string_view s);

}  // namespace kvcap
