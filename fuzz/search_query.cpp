// Search query parsing (search/query): never throws (documented); each clause has the shape its
// kind promises (one term for Term/Prefix, two or more for a phrase, two different ones for a
// proximity pair), terms of valid UTF-8; at most kMaxQueryClauses ranked clauses, at most
// kMaxProximityClauses proximity pairs and one prefix; lookup_terms is sorted and unique; the same
// text parses to the same canonical form.
#include <algorithm>

#include "base/util.hpp"
#include "fuzz_check.hpp"
#include "search/query.hpp"

using namespace notesd;

namespace {

void check_clause(const Clause& c) {
    FUZZ_CHECK(c.qtf >= 1, "qtf " + std::to_string(c.qtf));
    for (const auto& t : c.terms) FUZZ_CHECK(!t.empty() && valid_utf8(t), t);
    switch (c.kind) {
        case ClauseKind::Term:
            FUZZ_CHECK(c.terms.size() == 1 && c.prefix.empty(), "a term clause");
            break;
        case ClauseKind::Prefix:
            FUZZ_CHECK(c.terms.size() == 1 && !c.prefix.empty() && valid_utf8(c.prefix), c.prefix);
            break;
        case ClauseKind::Phrase:
            FUZZ_CHECK(c.terms.size() >= 2 && c.prefix.empty(), "a phrase of fewer than two terms");
            break;
        case ClauseKind::Proximity:
            FUZZ_CHECK(c.terms.size() == 2 && c.terms[0] != c.terms[1], "a proximity pair");
            break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view text = notesd_fuzz::as_text(data, size);
    if (!valid_utf8(text)) return 0;  // the API refuses such a query before parsing it
    ParsedQuery q;
    try {
        q = parse_query(text);
    } catch (...) {
        FUZZ_CHECK(false, "parse_query threw");
    }
    std::size_t ranked = 0, proximity = 0, prefixes = 0;
    for (const Clause& c : q.clauses) {
        check_clause(c);
        (c.kind == ClauseKind::Proximity ? proximity : ranked) += 1;
        prefixes += c.kind == ClauseKind::Prefix;
    }
    FUZZ_CHECK(ranked <= kMaxQueryClauses, std::to_string(ranked) + " ranked clauses");
    FUZZ_CHECK(proximity <= kMaxProximityClauses, std::to_string(proximity) + " proximity pairs");
    FUZZ_CHECK(prefixes <= 1, std::to_string(prefixes) + " prefix clauses");
    FUZZ_CHECK(q.empty() == (ranked == 0), "empty() disagrees with the clauses");
    const auto terms = q.lookup_terms();
    FUZZ_CHECK(std::is_sorted(terms.begin(), terms.end()) &&
                   std::adjacent_find(terms.begin(), terms.end()) == terms.end(),
               "lookup_terms not sorted and unique");
    FUZZ_CHECK(parse_query(text).canonical() == q.canonical(), "canonical() not deterministic");
    return 0;
}
