// Search index fields of a note, computed once at write time from its title and markdown.
#pragma once
#include "base/model.hpp"

namespace notesd {

/// Fills title_terms/body_terms/lengths (text.hpp analysis) and plain_text (markdown removed).
void add_search_fields(NoteInput& n);

}  // namespace notesd
