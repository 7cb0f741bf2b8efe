// Query-string decoding with the contract's rules: repeated known keys are errors, unknown ignored.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace notesd {

class QueryArgs {
public:
    /// Splits on '&', decodes percent-escapes and '+' (as space). Never throws: problems surface
    /// when a known key is read.
    explicit QueryArgs(std::string_view raw);
    /// The decoded value of `key`, or nullopt when absent. Throws ApiError 400 INVALID_PARAMETER
    /// naming the key when it is given twice, badly percent-encoded, or not valid UTF-8.
    std::optional<std::string> get(std::string_view key) const;

private:
    struct Pair {
        std::string key;
        std::string value;
        bool malformed = false;
    };
    std::vector<Pair> pairs_;
};

/// Percent-decoding ('+' becomes a space); nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace notesd
