// YAML front matter of markdown notes: a careful parser for the small subset notes use
// (scalars, quoted strings, inline and block lists), no YAML library.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace notesd {

/// The keys the importer understands; other keys are ignored.
struct FrontMatter {
    std::optional<std::string> title;
    std::optional<std::string> id;  // canonical uuid
    std::optional<long long> created_us;
    std::optional<long long> updated_us;
    std::optional<long long> trashed_us;  // trashed_at: the note goes to the trash (export writes it)
    std::vector<std::string> collections;
};

/// Splits "---\n...\n---\n" off the top of a file. Returns the body (the whole text when there
/// is no front matter) and fills fm; a malformed block sets error and returns "".
std::string split_front_matter(std::string_view text, FrontMatter& fm, std::string& error);
/// RFC 3339, "YYYY-MM-DD" or "YYYY-MM-DD HH:MM[:SS[.ffffff]]" (T or space; no offset = UTC).
std::optional<long long> parse_import_time(std::string_view s);

}  // namespace notesd
