#include "search/note_index.hpp"

#include "search/text.hpp"

namespace notesd {

void add_search_fields(NoteInput& n) {
    FieldIndex title = index_field(n.title);
    FieldIndex body = index_field(n.plain_text);
    n.title_terms = std::move(title.terms);
    n.title_len = static_cast<long long>(title.length);
    n.body_terms = std::move(body.terms);
    n.body_len = static_cast<long long>(body.length);
}

}  // namespace notesd
