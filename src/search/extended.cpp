#include "search/extended.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "base/util.hpp"
#include "index/search_index.hpp"
#include "search/query.hpp"
#include "index/text.hpp"
#include "search/topk.hpp"

namespace notesd {
namespace {

// Where a note sits in every term's postings (util.hpp's uuid halves keep the id order).
struct Key {
    long long updated = 0, hi = 0, lo = 0;
    bool operator<(const Key& o) const {
        if (updated != o.updated) return updated < o.updated;
        return hi != o.hi ? hi < o.hi : lo < o.lo;
    }
    bool operator==(const Key& o) const { return updated == o.updated && hi == o.hi && lo == o.lo; }
};

// The terms whose postings hold every note that can match: each term and prefix alternative,
// and of a phrase only its rarest word (a note without it cannot hold the phrase). A proximity
// clause never makes a match.
std::vector<std::string> finding_terms(const ParsedQuery& query, const QueryStats& stats) {
    auto df = [&](const std::string& t) {
        auto it = stats.df.find(t);
        return it == stats.df.end() ? 0LL : it->second;
    };
    std::vector<std::string> out;
    for (const Clause& c : query.clauses) {
        if (c.kind == ClauseKind::Term || c.kind == ClauseKind::Prefix) {
            out.push_back(c.terms[0]);
            if (c.kind == ClauseKind::Prefix)
                out.insert(out.end(), stats.expansions.begin(), stats.expansions.end());
        } else if (c.kind == ClauseKind::Phrase && !c.terms.empty()) {
            out.push_back(*std::min_element(c.terms.begin(), c.terms.end(),
                                            [&](const std::string& a, const std::string& b) {
                                                return df(a) < df(b);
                                            }));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    out.erase(std::remove_if(out.begin(), out.end(), [&](const std::string& t) { return df(t) == 0; }),
              out.end());
    return out;
}

bool has_phrase(const ParsedQuery& query) {
    for (const Clause& c : query.clauses)
        if (c.kind == ClauseKind::Phrase) return true;
    return false;
}

}  // namespace

std::vector<RankedNote> matches_by_date(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                        const SearchFilter& filter,
                                        const std::optional<PageKey>& after, std::size_t limit,
                                        const std::unordered_set<std::string>& excluded) {
    std::vector<RankedNote> out;
    if (query.empty() || limit == 0) return out;
    QueryStats stats = query_stats(index, user_id, query);
    const std::vector<std::string> finders = finding_terms(query, stats);
    if (finders.empty()) return out;
    // Without a phrase every note in a finder's postings matches; a phrase needs its words
    // adjacent, which the stored terms tell.
    const bool verify = has_phrase(query);
    const Ranker ranker(query, std::move(stats));
    std::optional<Key> pos;
    if (after) {
        Key k{after->sort_us, 0, 0};
        uuid_halves(after->id, k.hi, k.lo);
        pos = k;
    }
    long long fetch = static_cast<long long>(std::max<std::size_t>(2 * limit + 8, 64));
    for (;;) {
        SearchFilter window = filter;
        if (pos) window.updated.max_us = std::min(window.updated.max_us, pos->updated);
        std::vector<Key> keys;
        // The lists are newest first and cut at `fetch`: below the highest last key of a cut
        // list some matches may be missing, so only keys down to it are settled this round.
        std::optional<Key> horizon;
        for (const std::string& term : finders) {
            const std::vector<TermPosting> ps =
                index.term_postings(user_id, term, window, static_cast<int>(fetch), false);
            for (const TermPosting& p : ps) keys.push_back(Key{p.updated_us, p.uid_hi, p.uid_lo});
            if (static_cast<long long>(ps.size()) >= fetch) {
                const Key last{ps.back().updated_us, ps.back().uid_hi, ps.back().uid_lo};
                if (!horizon || *horizon < last) horizon = last;
            }
        }
        std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return b < a; });
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        std::vector<Key> settled;
        for (const Key& k : keys) {
            if (pos && !(k < *pos)) continue;  // at or before the cursor (same-time ties)
            if (horizon && k < *horizon) break;
            settled.push_back(k);
        }
        if (settled.empty()) {
            if (!horizon) return out;  // every list was read to its end
            fetch *= 2;                // a run of notes updated in the same microsecond
            continue;
        }
        std::vector<std::string> ids;
        for (const Key& k : settled) ids.push_back(uuid_from_halves(k.hi, k.lo));
        std::unordered_set<std::string> matching;
        if (verify) {
            for (std::size_t b = 0; b < ids.size(); b += 100) {
                std::vector<std::string> part(ids.begin() + static_cast<std::ptrdiff_t>(b),
                                              ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), b + 100)));
                for (const IndexedNote& n : index.indexed_notes(user_id, part))
                    if (ranker.score(n.title_terms, n.body_terms)) matching.insert(n.id);
            }
        }
        for (std::size_t i = 0; i < settled.size(); ++i) {
            if (excluded.count(ids[i]) || (verify && !matching.count(ids[i]))) continue;
            out.push_back(RankedNote{ids[i], settled[i].updated, 0});
            if (out.size() == limit) return out;
        }
        if (!horizon) return out;
        pos = settled.back();
    }
}

namespace {

// A note's terms worth a document-frequency look-up, most frequent in the note first.
constexpr std::size_t kRelatedLookups = 400;

double idf(long long notes, long long df) {
    return std::log(1.0 + (static_cast<double>(notes) - static_cast<double>(df) + 0.5) /
                              (static_cast<double>(df) + 0.5));
}

}  // namespace

ParsedQuery distinctive_query(SearchIndex& index, long long user_id, const IndexedNote& note) {
    const double title_weight = RankParams{}.title_weight;
    std::map<std::string, double> tf;  // by term: a deterministic order for the ties below
    for (std::string_view t : split_terms(note.title_terms)) tf[std::string(t)] += title_weight;
    for (std::string_view t : split_terms(note.body_terms)) tf[std::string(t)] += 1;
    std::vector<std::pair<std::string, double>> terms(tf.begin(), tf.end());
    std::stable_sort(terms.begin(), terms.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (terms.size() > kRelatedLookups) terms.resize(kRelatedLookups);
    std::vector<std::string> names;
    for (const auto& t : terms) names.push_back(t.first);
    const std::vector<long long> dfs = index.term_dfs(user_id, names);
    const long long notes = index.search_corpus(user_id).notes;
    struct Weighted {
        std::string term;
        double weight;
    };
    std::vector<Weighted> ranked;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        // in no other note, or in most of them: neither tells this note's neighbours apart
        if (dfs[i] < 2 || dfs[i] * 2 > notes) continue;
        ranked.push_back(Weighted{terms[i].first, (1.0 + std::log(terms[i].second)) * idf(notes, dfs[i])});
    }
    std::sort(ranked.begin(), ranked.end(), [](const Weighted& a, const Weighted& b) {
        return a.weight != b.weight ? a.weight > b.weight : a.term < b.term;
    });
    if (ranked.size() > kRelatedTerms) ranked.resize(kRelatedTerms);
    ParsedQuery q;
    for (Weighted& w : ranked) {
        Clause c;
        c.kind = ClauseKind::Term;
        c.terms.push_back(std::move(w.term));
        q.clauses.push_back(std::move(c));
    }
    return q;
}

std::vector<std::size_t> rank_collection_texts(const std::string& text,
                                               const std::vector<CollectionText>& docs,
                                               std::size_t limit) {
    const ParsedQuery query = parse_query(text);
    if (query.empty()) return {};
    std::vector<FieldIndex> titles, bodies;
    QueryStats stats;
    stats.corpus.notes = static_cast<long long>(docs.size());
    std::unordered_map<std::string, long long> df;
    for (const CollectionText& d : docs) {
        titles.push_back(index_field(d.title));
        bodies.push_back(index_field(d.description));
        stats.corpus.title_tokens += titles.back().length;
        stats.corpus.body_tokens += bodies.back().length;
        std::vector<std::string_view> seen = split_terms(titles.back().terms);
        for (std::string_view t : split_terms(bodies.back().terms)) seen.push_back(t);
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        for (std::string_view t : seen) ++df[std::string(t)];
    }
    for (const std::string& t : query.lookup_terms()) {
        auto it = df.find(t);
        stats.df[t] = it == df.end() ? 0 : it->second;
    }
    // The prefix's expansions as the store lists them: most frequent first, then bytewise.
    if (const std::string prefix = query.prefix(); !prefix.empty()) {
        std::vector<std::pair<std::string, long long>> found;
        for (const auto& [term, n] : df)
            if (term.compare(0, prefix.size(), prefix) == 0) found.emplace_back(term, n);
        std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
            return a.second != b.second ? a.second > b.second : a.first < b.first;
        });
        if (found.size() > kMaxPrefixExpansions) found.resize(kMaxPrefixExpansions);
        for (const auto& [term, n] : found) {
            stats.df[term] = n;
            stats.expansions.push_back(term);
        }
    }
    const Ranker ranker(query, std::move(stats));
    std::vector<std::pair<double, std::size_t>> hits;
    for (std::size_t i = 0; i < docs.size(); ++i)
        if (std::optional<double> s = ranker.score(titles[i].terms, bodies[i].terms))
            hits.emplace_back(*s, i);
    std::stable_sort(hits.begin(), hits.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < hits.size() && i < limit; ++i) out.push_back(hits[i].second);
    return out;
}

}  // namespace notesd
