#include "search/topk.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "base/util.hpp"
#include "index/search_index.hpp"

namespace notesd {

// ---- candidates: which postings to read, and the best notes they name ----

namespace {

// A well-spread hash of a note's uuid halves (splitmix64's finaliser over both).
std::size_t mix_halves(long long hi, long long lo) {
    std::uint64_t x = static_cast<std::uint64_t>(hi) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(lo);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<std::size_t>(x ^ (x >> 31));
}

// Notes (by uuid halves) to indexes below UINT32_MAX, by open addressing over at least twice
// as many slots as the notes it is sized for.
class NoteSlots {
public:
    explicit NoteSlots(std::size_t notes) {
        std::size_t n = 16;
        while (n < 2 * notes) n <<= 1;
        table_.assign(n, UINT32_MAX);
        mask_ = n - 1;
    }
    /// The slot of the note: its index, or UINT32_MAX where it is to be stored. is(i): index i
    /// stands for this note.
    template <class Is>
    std::uint32_t& slot(long long hi, long long lo, Is&& is) {
        for (std::size_t i = mix_halves(hi, lo) & mask_;; i = (i + 1) & mask_)
            if (table_[i] == UINT32_MAX || is(table_[i])) return table_[i];
    }

private:
    std::vector<std::uint32_t> table_;
    std::size_t mask_ = 0;
};

}  // namespace

std::vector<RetrievalUnit> Ranker::retrieval_plan(long long posting_budget) const {
    std::vector<RetrievalUnit> all;
    for (std::size_t c = 0; c < compiled_.size(); ++c) {
        const Compiled& k = compiled_[c];
        if (k.kind == ClauseKind::Term || k.kind == ClauseKind::Prefix) {
            for (const Alt& a : k.alts)
                if (long long df = df_of(terms_[a.term]); df > 0)
                    all.push_back(RetrievalUnit{terms_[a.term], c, df, a.weight});
        } else if (k.kind == ClauseKind::Phrase) {
            // every note with the phrase has its rarest word: that word alone finds them all
            int rarest = -1;
            long long min_df = 0;
            for (int t : k.seq) {
                const long long df = df_of(terms_[t]);
                if (rarest < 0 || df < min_df || (df == min_df && terms_[t] < terms_[rarest])) {
                    rarest = t;
                    min_df = df;
                }
            }
            if (min_df > 0) all.push_back(RetrievalUnit{terms_[rarest], c, min_df, k.weight});
        }
    }
    std::sort(all.begin(), all.end(), [](const RetrievalUnit& a, const RetrievalUnit& b) {
        if (a.df != b.df) return a.df < b.df;
        if (a.term != b.term) return a.term < b.term;
        return a.clause < b.clause;
    });
    std::vector<RetrievalUnit> out;
    std::unordered_set<std::string> fetched;
    long long spent = 0;
    for (auto& u : all) {
        const bool is_new = !fetched.count(u.term);
        if (is_new && !out.empty() && spent + u.df > posting_budget) break;
        if (is_new) {
            spent += u.df;
            fetched.insert(u.term);
        }
        out.push_back(std::move(u));
    }
    return out;
}

namespace {

struct NoteEntry {
    const Posting* first = nullptr;  // any posting of the note: its id, time and lengths
    double pre = 0;
    std::size_t clause = SIZE_MAX;  // clause of `pending`
    double pending = 0;             // best unit weight of that clause so far
    std::uint32_t last_hit = UINT32_MAX;
};

struct TermHit {  // a (note, term) posting, chained per note
    int term = -1;
    const Posting* posting = nullptr;
    std::uint32_t prev = UINT32_MAX;
};

// Every note of the units' postings once, with its pre-score and the chain of its postings.
struct PostingUnion {
    std::vector<NoteEntry> entries;
    std::vector<TermHit> hits;
};

// unit_terms[u]: the interned term of unit u (Ranker::term_index).
PostingUnion union_postings(const std::vector<RetrievalUnit>& units,
                            const std::vector<std::vector<Posting>>& postings,
                            const std::vector<int>& unit_terms) {
    const std::size_t n_units = unit_terms.size();
    std::vector<std::size_t> order(n_units);
    for (std::size_t u = 0; u < n_units; ++u) order[u] = u;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return units[a].clause < units[b].clause; });
    // a clause counts once per note (its best unit), and clauses add up in clause order so the
    // floating sum is the same whatever order the postings arrived in
    std::size_t total = 0;
    for (std::size_t u = 0; u < n_units; ++u) total += postings[u].size();
    PostingUnion out;
    std::vector<NoteEntry>& entries = out.entries;
    std::vector<TermHit>& hits = out.hits;
    entries.reserve(total);
    hits.reserve(total);
    NoteSlots index(total);  // note -> entry
    auto entry_of = [&](const Posting& p) -> NoteEntry& {
        std::uint32_t& at = index.slot(p.uid_hi, p.uid_lo, [&](std::uint32_t e) {
            return entries[e].first->uid_hi == p.uid_hi && entries[e].first->uid_lo == p.uid_lo;
        });
        if (at == UINT32_MAX) {
            at = static_cast<std::uint32_t>(entries.size());
            entries.push_back(NoteEntry{&p});
        }
        return entries[at];
    };
    for (std::size_t u : order) {
        const RetrievalUnit& unit = units[u];
        const int term = unit_terms[u];
        for (const Posting& p : postings[u]) {
            NoteEntry& e = entry_of(p);
            if (e.clause != unit.clause) {
                e.pre += e.pending;
                e.clause = unit.clause;
                e.pending = unit.weight;
            } else {
                e.pending = std::max(e.pending, unit.weight);
            }
            hits.push_back(TermHit{term, &p, e.last_hit});
            e.last_hit = static_cast<std::uint32_t>(hits.size() - 1);
        }
    }
    return out;
}

// The order of the cut, on contiguous keys: a comparison through entries and postings would
// miss the cache at every step.
struct CutKey {
    double s;
    long long us, hi, lo;
    std::uint32_t entry;
};

// The keys of the best `keep` entries (pre-score desc, updated_us desc, id desc), in that order,
// at the front of the returned list.
std::vector<CutKey> best_entries(const std::vector<NoteEntry>& entries, std::size_t keep) {
    auto before = [](const CutKey& x, const CutKey& y) {
        if (x.s != y.s) return x.s > y.s;
        if (x.us != y.us) return x.us > y.us;
        if (x.hi != y.hi) return x.hi > y.hi;
        return x.lo > y.lo;
    };
    std::vector<CutKey> all(entries.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) {
        const NoteEntry& e = entries[i];
        all[i] = CutKey{e.pre + e.pending, e.first->updated_us, e.first->uid_hi, e.first->uid_lo, i};
    }
    // One unit's postings arrive in this order already (equal pre-scores, key order): no sort.
    if (!std::is_sorted(all.begin(), all.end(), before)) {
        const auto cut = all.begin() + static_cast<std::ptrdiff_t>(keep);
        if (cut != all.end()) std::nth_element(all.begin(), cut, all.end(), before);
        std::sort(all.begin(), cut, before);
    }
    return all;
}

}  // namespace

std::vector<Candidate> Ranker::bound_candidates(const std::vector<RetrievalUnit>& units,
                                                const std::vector<std::vector<Posting>>& postings,
                                                const std::vector<bool>& complete,
                                                std::size_t max_candidates) const {
    const std::size_t n_units = std::min(units.size(), postings.size());
    std::vector<int> unit_terms(n_units);
    for (std::size_t u = 0; u < n_units; ++u) unit_terms[u] = term_index(units[u].term);
    const PostingUnion notes = union_postings(units, postings, unit_terms);
    const std::size_t keep = std::min(max_candidates, notes.entries.size());
    const std::vector<CutKey> all = best_entries(notes.entries, keep);
    // Terms whose whole (filtered) list was read: a candidate not in it has none of them.
    std::vector<int> unknown_or_zero(terms_.size(), -1);
    for (std::size_t t = 0; t < terms_.size(); ++t)
        if (df_of(terms_[t]) == 0) unknown_or_zero[t] = 0;  // in none of the user's notes
    for (std::size_t u = 0; u < n_units; ++u)
        if (u < complete.size() && complete[u])
            if (const int t = unit_terms[u]; t >= 0) unknown_or_zero[t] = 0;
    // Positions only matter to phrase and proximity clauses: without them a candidate holds
    // none (estimate() and add_counts() then skip them).
    const std::size_t n_positions = needs_positions() ? terms_.size() : 0;
    std::vector<Candidate> out;
    out.reserve(keep);
    for (std::size_t i = 0; i < keep; ++i) {
        const NoteEntry& e = notes.entries[all[i].entry];
        Candidate c{e.first->uid_hi, e.first->uid_lo, e.first->updated_us, e.first->title_len,
                    e.first->body_len, unknown_or_zero, unknown_or_zero,
                    std::vector<std::string>(n_positions)};
        for (std::uint32_t h = e.last_hit; h != UINT32_MAX; h = notes.hits[h].prev)
            if (const int t = notes.hits[h].term; t >= 0) {
                c.title_tf[t] = notes.hits[h].posting->title_tf;
                c.body_tf[t] = notes.hits[h].posting->body_tf;
                if (n_positions) c.positions[t] = notes.hits[h].posting->positions;
            }
        out.push_back(std::move(c));
    }
    return out;
}

void Ranker::add_counts(std::vector<Candidate>& cands, const std::string& term,
                        const std::vector<Posting>& more, bool complete) const {
    const int t = term_index(term);
    if (t < 0) return;
    // The candidates still lacking the term, in a table probed per posting (at most
    // kMaxCandidates entries against up to thousands of postings).
    std::vector<std::uint32_t> open;
    for (std::size_t i = 0; i < cands.size(); ++i)
        if (cands[i].title_tf[t] < 0) open.push_back(static_cast<std::uint32_t>(i));
    if (open.empty()) return;
    NoteSlots index(open.size());
    for (std::uint32_t i : open)
        index.slot(cands[i].uid_hi, cands[i].uid_lo, [](std::uint32_t) { return false; }) = i;
    for (const Posting& p : more) {
        const std::uint32_t at = index.slot(p.uid_hi, p.uid_lo, [&](std::uint32_t i) {
            return cands[i].uid_hi == p.uid_hi && cands[i].uid_lo == p.uid_lo;
        });
        if (at == UINT32_MAX) continue;
        Candidate& c = cands[at];
        if (c.title_tf[t] < 0) {  // a note listed twice: its first posting counts
            c.title_tf[t] = p.title_tf;
            c.body_tf[t] = p.body_tf;
            if (c.positions.size() == terms_.size()) c.positions[t] = p.positions;
        }
    }
    if (complete)
        for (std::uint32_t i : open)
            if (cands[i].title_tf[t] < 0) cands[i].title_tf[t] = cands[i].body_tf[t] = 0;
}

// ---- the search: statistics, candidates, exact top k ----

QueryStats query_stats(SearchIndex& index, long long user_id, const ParsedQuery& query) {
    QueryStats stats;
    const SearchCorpus corpus = index.search_corpus(user_id);
    stats.corpus = CorpusStats{corpus.notes, corpus.title_tokens, corpus.body_tokens};
    std::vector<std::string> terms = query.lookup_terms();
    std::vector<long long> dfs = index.term_dfs(user_id, terms);
    for (std::size_t i = 0; i < terms.size(); ++i) stats.df[terms[i]] = dfs[i];
    const std::string prefix = query.prefix();
    if (!prefix.empty()) {
        for (auto& [term, df] : index.prefix_terms(user_id, prefix,
                                                   static_cast<int>(kMaxPrefixExpansions))) {
            stats.df[term] = df;
            stats.expansions.push_back(term);
        }
    }
    return stats;
}

namespace {

constexpr std::size_t kTermsBatch = kPostingsAtMax;  // open candidates resolved together
constexpr std::size_t kLookupTerms = 4;  // open terms looked up per batch, at most
constexpr long long kWindowLimit = 4 * static_cast<long long>(kMaxCandidates);  // per open term
constexpr long long kWindowPerCandidate = 16;  // postings worth a candidate's resolution
constexpr long long kWindowBudget = kPostingBudget;  // postings read for open terms in all

struct Keyed {
    double score = 0;
    long long updated_us = 0, hi = 0, lo = 0;
    std::size_t candidate = 0;
};

// Final order (ranks_before): score desc, updated_us desc, id desc (the halves' order).
bool keyed_before(const Keyed& a, const Keyed& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.updated_us != b.updated_us) return a.updated_us > b.updated_us;
    return a.hi != b.hi ? a.hi > b.hi : a.lo > b.lo;
}

// Exact scores of a batch of candidates whose postings left them open (nullopt: no match, or
// the note is gone). Few open terms: their postings rows are looked up by the candidates' keys
// (positions included, so phrases and proximity are decided too); only candidates still open
// after that, or a batch with many open terms, have their stored terms read.
void resolve_batch(SearchIndex& index, long long user_id, const Ranker& ranker,
                   std::vector<Candidate>& cands, const std::vector<std::size_t>& batch,
                   std::vector<std::optional<double>>& scores) {
    std::vector<Candidate> group;
    for (std::size_t d : batch) group.push_back(std::move(cands[d]));
    const std::vector<Ranker::OpenTerm> open = ranker.open_terms(group);
    if (open.size() <= kLookupTerms) {
        std::vector<PostingNote> notes;
        for (const Candidate& g : group) notes.push_back(PostingNote{g.updated_us, g.uid_hi, g.uid_lo});
        for (const Ranker::OpenTerm& o : open)
            ranker.add_counts(group, o.term, index.postings_at(user_id, o.term, notes), true);
    }
    std::vector<std::string> ids;
    std::unordered_map<std::string, std::size_t> which;
    for (std::size_t k = 0; k < group.size(); ++k) {
        const Estimate e = ranker.estimate(group[k]);
        if (e.exact) {
            if (e.matched) scores[batch[k]] = e.score;
            continue;
        }
        ids.push_back(uuid_from_halves(group[k].uid_hi, group[k].uid_lo));
        which.emplace(ids.back(), batch[k]);
    }
    if (!ids.empty())
        for (const IndexedNote& n : index.indexed_notes(user_id, ids))
            scores[which.at(n.id)] = ranker.score(n.title_terms, n.body_terms);
    for (std::size_t k = 0; k < group.size(); ++k) cands[batch[k]] = std::move(group[k]);
}

// The best `limit` candidates by exact score. Candidates are visited by their estimate (exact,
// or an upper bound); the walk stops once the limit-th best exact score ranks before the next
// estimate, since no later candidate can then enter. Open candidates are resolved a batch at a
// time (resolve_batch), only when visited: most term queries resolve none.
std::vector<RankedNote> best_exact(SearchIndex& index, long long user_id, const Ranker& ranker,
                                   std::vector<Candidate>& cands, std::size_t limit) {
    std::vector<Keyed> order;
    std::vector<Estimate> est;
    order.reserve(cands.size());
    for (std::size_t i = 0; i < cands.size(); ++i) {
        est.push_back(ranker.estimate(cands[i]));
        order.push_back(Keyed{est[i].score, cands[i].updated_us, cands[i].uid_hi, cands[i].uid_lo, i});
    }
    // The walk mostly stops long before the end: order is sorted a chunk at a time, as far as
    // the walk and its batches look.
    std::size_t sorted = 0;
    auto sorted_to = [&](std::size_t n) {
        n = std::min(order.size(), n);
        if (n <= sorted) return;
        n = std::min(order.size(), std::max(n, sorted + 128));
        if (n < order.size())
            std::nth_element(order.begin() + static_cast<std::ptrdiff_t>(sorted),
                             order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), keyed_before);
        std::sort(order.begin() + static_cast<std::ptrdiff_t>(sorted),
                  order.begin() + static_cast<std::ptrdiff_t>(n), keyed_before);
        sorted = n;
    };
    std::vector<Keyed> top;  // a heap whose front is the worst kept
    std::vector<std::optional<double>> resolved(cands.size());
    std::vector<bool> fetched(cands.size(), false);
    for (std::size_t i = 0; i < order.size(); ++i) {
        sorted_to(i + 1);
        if (top.size() == limit && keyed_before(top.front(), order[i])) break;
        const std::size_t c = order[i].candidate;
        std::optional<double> score;
        if (est[c].exact) {
            if (est[c].matched) score = est[c].score;
        } else {
            if (!fetched[c]) {
                std::vector<std::size_t> batch;
                for (std::size_t j = i; j < order.size() && batch.size() < kTermsBatch; ++j) {
                    sorted_to(j + 1);
                    const std::size_t d = order[j].candidate;
                    if (est[d].exact || fetched[d]) continue;
                    fetched[d] = true;
                    batch.push_back(d);
                }
                resolve_batch(index, user_id, ranker, cands, batch, resolved);
            }
            score = resolved[c];
        }
        if (!score) continue;
        top.push_back(Keyed{*score, cands[c].updated_us, cands[c].uid_hi, cands[c].uid_lo, c});
        std::push_heap(top.begin(), top.end(), keyed_before);
        if (top.size() > limit) {
            std::pop_heap(top.begin(), top.end(), keyed_before);
            top.pop_back();
        }
    }
    std::sort(top.begin(), top.end(), keyed_before);
    std::vector<RankedNote> ranked;
    for (const Keyed& k : top)
        ranked.push_back(RankedNote{uuid_from_halves(k.hi, k.lo), k.updated_us, k.score});
    return ranked;
}

// The share of the user's notes that lies in the candidates' time window [lo, hi], as the
// recruiting lists show it: a unit read completely down to the window's oldest candidate has
// k of its df postings in the window; the largest such share counts. A term with document
// frequency df then has about share x df postings there. Only decides whether a window scan
// is worth reading, never a result.
double window_share(const std::vector<RetrievalUnit>& plan,
                    const std::vector<std::vector<Posting>>& postings, long long lo, long long hi) {
    double share = 0;
    for (std::size_t u = 0; u < plan.size() && u < postings.size(); ++u) {
        if (plan[u].df <= 0) continue;
        long long k = 0;
        for (const Posting& p : postings[u]) k += p.updated_us >= lo && p.updated_us <= hi;
        share = std::max(share, static_cast<double>(k) / static_cast<double>(plan[u].df));
    }
    return share;
}

// Counts of the query terms that recruited no candidates (words beyond the posting budget, a
// phrase's other words, a prefix's frequent expansions), from their postings in the
// candidates' updated_us window: the candidates of one frequent word are its most recent
// notes, so the window is narrow and its postings few. A candidate that then lacks a term is
// scored exactly without a read, and a phrase can only match candidates holding all its words.
// Terms are read cheapest first, each only while some candidate needs it (Ranker::open_terms)
// and its expected postings in the window (window_share) cost less than resolving those
// candidates one by one: a stored-terms read or a key lookup costs as much as decoding
// kWindowPerCandidate postings. A scan stops at its limit, short of some candidates, which
// best_exact then resolves by key anyway.
void fill_open_counts(SearchIndex& index, long long user_id, const SearchFilter& filter,
                      const Ranker& ranker, const std::vector<RetrievalUnit>& plan,
                      const std::vector<std::vector<Posting>>& postings,
                      std::vector<Candidate>& cands) {
    if (cands.empty()) return;
    SearchFilter window = filter;
    long long lo = cands[0].updated_us, hi = cands[0].updated_us;
    for (const Candidate& c : cands) lo = std::min(lo, c.updated_us), hi = std::max(hi, c.updated_us);
    window.updated.min_us = std::max(window.updated.min_us, lo);
    window.updated.max_us = std::min(window.updated.max_us, hi);
    const double share = window_share(plan, postings, lo, hi);
    std::unordered_set<std::string> tried;
    long long spent = 0;
    for (;;) {
        // the cheapest term still needed that is worth its scan and fits the budget
        std::optional<Ranker::OpenTerm> next;
        long long next_limit = 0;
        double next_cost = 0;
        for (Ranker::OpenTerm& o : ranker.open_terms(cands)) {
            if (tried.count(o.term)) continue;
            const double expected = share * static_cast<double>(ranker.df_of(o.term));
            const long long limit = std::max(kWindowLimit, kWindowPerCandidate * static_cast<long long>(o.candidates));
            if (expected > static_cast<double>(limit) || spent + limit > kWindowBudget) continue;
            if (!next || expected < next_cost) next = std::move(o), next_limit = limit, next_cost = expected;
        }
        if (!next) return;
        tried.insert(next->term);
        const std::vector<Posting> more = index.term_postings(user_id, next->term, window,
                                                              static_cast<int>(next_limit),
                                                              ranker.needs_positions());
        spent += static_cast<long long>(more.size());
        ranker.add_counts(cands, next->term, more, static_cast<long long>(more.size()) < next_limit);
    }
}

}  // namespace

std::vector<std::string> ranked_note_ids(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                         const SearchFilter& filter) {
    std::vector<std::string> ids;
    for (RankedNote& n : ranked_notes(index, user_id, query, filter, kSnapshotSize))
        ids.push_back(std::move(n.id));
    return ids;
}

std::vector<RankedNote> ranked_notes(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                     const SearchFilter& filter, std::size_t count) {
    if (query.empty() || count == 0) return {};
    // More results than the usual candidate bound need as many candidates.
    const std::size_t max_candidates = std::max(kMaxCandidates, count);
    Ranker ranker(query, query_stats(index, user_id, query));
    const std::vector<RetrievalUnit> plan = ranker.retrieval_plan(kPostingBudget);
    // With one unit every posting gets the same pre-score, so the candidates are the first
    // kMaxCandidates postings in the store's order (updated desc, id desc), which is exactly
    // the bound's tie order: reading further could not change them (a frequent term alone).
    const long long fetch_limit = plan.size() == 1
        ? std::min<long long>(kPostingBudget, static_cast<long long>(max_candidates))
        : kPostingBudget;
    std::vector<std::vector<Posting>> postings;
    std::vector<bool> complete;
    std::unordered_map<std::string, std::size_t> fetched;  // a term shared by units is read once
    for (const RetrievalUnit& unit : plan) {
        auto it = fetched.find(unit.term);
        if (it != fetched.end()) {
            postings.push_back(postings[it->second]);
            complete.push_back(complete[it->second]);
            continue;
        }
        fetched.emplace(unit.term, postings.size());
        postings.push_back(index.term_postings(user_id, unit.term, filter,
                                               static_cast<int>(fetch_limit),
                                               ranker.needs_positions()));
        complete.push_back(static_cast<long long>(postings.back().size()) < fetch_limit);
    }
    std::vector<Candidate> candidates =
        ranker.bound_candidates(plan, postings, complete, max_candidates);
    fill_open_counts(index, user_id, filter, ranker, plan, postings, candidates);
    return best_exact(index, user_id, ranker, candidates, count);
}

}  // namespace notesd
