// Markdown derivation: for any note (and an explicit title taken from the input's first line),
// the title and snippet are at most their documented lengths; for UTF-8 input without NUL the
// title, snippet and plain text are valid UTF-8 without NUL and link targets valid UTF-8. The
// snippet helpers it uses (search/text: collapse_whitespace, truncate_text) keep UTF-8 whole.
#include "base/util.hpp"
#include "fuzz_check.hpp"
#include "ingest/markdown.hpp"
#include "index/text.hpp"

using namespace notesd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view text = notesd_fuzz::as_text(data, size);
    const bool utf8 = valid_utf8(text) && text.find('\0') == std::string_view::npos;
    std::optional<std::string> explicit_title;
    if (size && data[0] == '!') explicit_title = std::string(text.substr(1, text.find('\n')));
    const DerivedNote d = derive_note(text, explicit_title);
    FUZZ_CHECK(utf8_length(d.title) <= kTitleMaxChars, d.title);
    FUZZ_CHECK(utf8_length(d.snippet) <= kSnippetMaxChars, d.snippet);
    if (utf8) {
        for (const std::string* s : {&d.title, &d.snippet, &d.plain_text})
            FUZZ_CHECK(valid_utf8(*s) && s->find('\0') == std::string::npos, *s);
        for (const LinkRef& l : d.links) FUZZ_CHECK(valid_utf8(l.target), l.target);
    }
    const std::string collapsed = collapse_whitespace(text);
    const std::string cut = truncate_text(collapsed, 50);
    FUZZ_CHECK(utf8_length(cut) <= 50, cut);
    if (valid_utf8(collapsed)) FUZZ_CHECK(valid_utf8(cut), cut);
    return 0;
}
