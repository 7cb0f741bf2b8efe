// A one-pass check of JSON text against RFC 8259 before a DOM parser sees it. jsoncpp's strict
// mode still takes a NUL byte as the end of the text (what follows is never read), raw control
// characters inside strings, and escaped lone surrogates (which become invalid UTF-8); this
// check rejects those and every other departure from the grammar, with the byte offset.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace notesd {

struct JsonSyntaxError {
    std::size_t offset = 0;  ///< byte offset of the first offending byte
    std::string problem;     ///< what is wrong there, e.g. "a raw control character U+000A in a string"
};

/// Checks that `text` is exactly one JSON value (RFC 8259: UTF-8, whitespace around it and
/// nothing else) nested at most `max_depth` arrays and objects deep, with no escaped lone
/// surrogate. With `find_duplicate_keys` it also rejects an object holding one key twice
/// (compared after unescaping); that costs allocations, so callers whose DOM parser detects
/// duplicates use it only to explain a rejection.
std::optional<JsonSyntaxError> check_json_text(std::string_view text, std::size_t max_depth,
                                               bool find_duplicate_keys = false);

/// The full message for a client: "<problem> at byte <offset>".
std::string describe(const JsonSyntaxError& e);

}  // namespace notesd
