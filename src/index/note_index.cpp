#include "index/note_index.hpp"

#include "index/text.hpp"

namespace notesd {

NoteTerms note_terms(std::string_view title, std::string_view plain_text) {
    FieldIndex t = index_field(title);
    FieldIndex b = index_field(plain_text);
    return NoteTerms{std::move(t.terms), std::move(b.terms), static_cast<long long>(t.length),
                     static_cast<long long>(b.length)};
}

}  // namespace notesd
