// A note's plain text stored as edits of its content (store/plain_text_codec): for any note,
// the edits of its derived plain text decode back to it byte for byte, are valid UTF-8 without
// NUL (a TEXT value on every backend) and are never longer than the text; any stored value,
// damaged or not, decodes or is a clear error (std::runtime_error), against any content.
#include <stdexcept>

#include "base/util.hpp"
#include "fuzz_check.hpp"
#include "ingest/markdown.hpp"
#include "store/plain_text_codec.hpp"

using namespace notesd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view text = notesd_fuzz::as_text(data, size);
    if (valid_utf8(text) && text.find('\0') == std::string_view::npos) {
        const std::string plain = derive_note(text, std::nullopt).plain_text;
        const std::string stored = detail::encode_plain_text(text, plain);
        FUZZ_CHECK(detail::decode_plain_text(text, stored) == plain, stored);
        FUZZ_CHECK(valid_utf8(stored) && stored.find('\0') == std::string::npos, stored);
        FUZZ_CHECK(stored.size() <= plain.size(), stored);
    }
    // The input's first half read as content, the rest as a stored value.
    const std::string_view content = text.substr(0, size / 2), value = text.substr(size / 2);
    try {
        const std::string plain = detail::decode_plain_text(content, value);
        if (!detail::is_plain_text_edits(value)) FUZZ_CHECK(plain == value, plain);
    } catch (const std::runtime_error&) {
        FUZZ_CHECK(detail::is_plain_text_edits(value), "a value that is not edits was refused");
    }
    return 0;
}
