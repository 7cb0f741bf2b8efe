// How a note's plain text (markdown.hpp's DerivedNote::plain_text: what search analyses and
// snippets quote) is stored in note_text.plain_text and trashed_notes.plain_text: as the edits
// that turn the note's content into it. The plain text is nearly all runs of the content's
// own bytes (markup and the title line left out, whitespace collapsed), so the edits of a
// 2 KB note take some tens of bytes instead of a second copy of its text, which was a quarter
// of the SQLite file (doc/benchmarks.md).
//
// The stored value is TEXT on every backend (valid UTF-8, no NUL), one of:
//  - the plain text itself: rows written before this format, and any text the edits would
//    not make shorter. A plain text never starts with ASCII whitespace (collapse_whitespace),
//  - "\n" followed by edits, applied in order from the content's first byte:
//      c<N>      copy the next N bytes of the content,
//      s<N>      skip the next N bytes of the content,
//      i<N>:<B>  insert the N bytes B (whole UTF-8 characters),
//      _         a space for the content's next byte (a line break or other ASCII space).
//    N is decimal. Example: "\ns15c21_s7c12" (leave out a 15-byte title line, copy 21 bytes,
//    a space for a line break, leave out 7 bytes of line break and list markup, copy 12).
#pragma once
#include <string>
#include <string_view>

namespace notesd::detail {

/// The stored form of `plain` (a valid UTF-8 plain text derived from `content`).
std::string encode_plain_text(std::string_view content, std::string_view plain);

/// The first byte of a stored value that is edits.
constexpr char kPlainTextEdits = '\n';

/// Whether a stored value is edits (else it is the plain text itself).
inline bool is_plain_text_edits(std::string_view stored) {
    return !stored.empty() && stored[0] == kPlainTextEdits;
}

/// The plain text a stored value holds, given the content it was encoded against. Throws
/// std::runtime_error when edits do not fit the content (a row changed outside notesd).
std::string decode_plain_text(std::string_view content, std::string_view stored);

}  // namespace notesd::detail
