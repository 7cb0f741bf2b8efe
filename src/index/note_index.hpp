// A note's indexed fields: the analysed terms (text.hpp) of its title and of its plain text.
// The store keeps only those two texts; the terms are derived from them whenever they are
// needed (a new version's postings, an old version's postings to remove, compaction, check),
// so what a note is indexed under is a function of what is stored, on every backend.
#pragma once
#include <string>
#include <string_view>

namespace notesd {

/// The analysed terms of a note's two fields, space-joined in position order, and their counts.
struct NoteTerms {
    std::string title_terms, body_terms;
    long long title_len = 0, body_len = 0;
};

NoteTerms note_terms(std::string_view title, std::string_view plain_text);

}  // namespace notesd
