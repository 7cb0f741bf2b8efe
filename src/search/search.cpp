#include "search/search.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ingest/markdown.hpp"
#include "index/search_index.hpp"
#include "search/text.hpp"
#include "base/util.hpp"
#include "search/word_scan.hpp"

namespace notesd {
namespace {

constexpr std::size_t kSnippetChars = 200;
constexpr std::size_t kSnippetWindowWords = 24;
constexpr std::size_t kSnippetScanWords = 4000;  // bounds the work per result
constexpr std::size_t kSnippetLeadWords = 3;     // context kept before the first match

QueryStats gather_stats(SearchIndex& index, long long user_id, const ParsedQuery& query) {
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

}  // namespace

// Which query terms a word of plain text carries (ids into `terms`), by the same analysis.
class WordMatcher {
public:
    explicit WordMatcher(const ParsedQuery& q) {
        for (const Clause& c : q.clauses) {
            // A word is a stopword for the snippet when every clause naming it says so; a
            // quoted phrase makes its words count, a proximity pair changes nothing.
            const bool stop = c.kind == ClauseKind::Phrase ? false
                              : c.kind == ClauseKind::Proximity ? true : c.stop;
            for (const std::string& t : c.terms) add(t, stop);
            if (c.kind == ClauseKind::Prefix) {
                prefix_ = c.prefix;
                prefix_stop_ = c.stop;
                leads_.add(c.prefix);
            }
        }
    }
    /// The query term a word of lead_words() carries (an id below kinds()), or -1.
    int match(std::string_view word) {
        // Words repeat, in a note and across a page of notes: each is analysed once.
        if (auto it = seen_.find(word); it != seen_.end()) return it->second;
        int id = -1;
        for (const Token& t : analyze(word)) {
            if (auto it = ids_.find(t.term); it != ids_.end()) {
                id = it->second;
                break;
            }
            if (!prefix_.empty() && t.surface.compare(0, prefix_.size(), prefix_) == 0) {
                id = static_cast<int>(ids_.size());  // the prefix's id
                break;
            }
        }
        if (seen_.size() < kMaxSeenWords) seen_.emplace(owned_.emplace_back(word), id);
        return id;
    }
    /// Analysis is the costly step: only words that may carry a term are matched.
    const TermLeads& leads() const { return leads_; }
    bool empty() const { return ids_.empty() && prefix_.empty(); }
    /// match() answers -1 or an id below this.
    std::size_t kinds() const { return ids_.size() + 1; }
    /// Whether id stands for a query word that is not a stopword.
    bool content(int id) const {
        return static_cast<std::size_t>(id) < stop_.size() ? !stop_[static_cast<std::size_t>(id)]
                                                           : !prefix_stop_;
    }

private:
    void add(const std::string& t, bool stop) {
        const auto [it, added] = ids_.emplace(t, static_cast<int>(ids_.size()));
        if (added) {
            stop_.push_back(stop);
            leads_.add(t);
        } else {
            stop_[static_cast<std::size_t>(it->second)] = stop_[static_cast<std::size_t>(it->second)] && stop;
        }
    }
    static constexpr std::size_t kMaxSeenWords = 1 << 16;
    std::unordered_map<std::string, int> ids_;
    std::deque<std::string> owned_;                    // the words seen_ holds views of
    std::unordered_map<std::string_view, int> seen_;  // match() by word
    std::vector<bool> stop_;  // by id
    bool prefix_stop_ = false;
    TermLeads leads_;
    std::string prefix_;
};

namespace {

// Byte offset a little before the first query term found in a long unspaced run; 0 when none.
std::size_t cjk_lead(std::string_view run, const ParsedQuery& query) {
    for (const Clause& c : query.clauses)
        for (const std::string& t : c.terms) {
            std::size_t at = run.find(t);
            if (at == std::string_view::npos || at <= 30) continue;
            std::size_t back = at - 30;
            while (back > 0 && (static_cast<unsigned char>(run[back]) & 0xC0) == 0x80) --back;
            return back;
        }
    return 0;
}

}  // namespace

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
std::vector<std::string> best_exact(SearchIndex& index, long long user_id, const Ranker& ranker,
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
    std::vector<std::string> ids;
    for (const Keyed& k : top) ids.push_back(uuid_from_halves(k.hi, k.lo));
    return ids;
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
    if (query.empty()) return {};
    Ranker ranker(query, gather_stats(index, user_id, query));
    const std::vector<RetrievalUnit> plan = ranker.retrieval_plan(kPostingBudget);
    // With one unit every posting gets the same pre-score, so the candidates are the first
    // kMaxCandidates postings in the store's order (updated desc, id desc), which is exactly
    // the bound's tie order: reading further could not change them (a frequent term alone).
    const long long fetch_limit = plan.size() == 1
        ? std::min<long long>(kPostingBudget, static_cast<long long>(kMaxCandidates))
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
        ranker.bound_candidates(plan, postings, complete, kMaxCandidates);
    fill_open_counts(index, user_id, filter, ranker, plan, postings, candidates);
    return best_exact(index, user_id, ranker, candidates, kSnapshotSize);
}

SnippetMaker::SnippetMaker(const ParsedQuery& query)
    : query_(query), matcher_(std::make_unique<WordMatcher>(query)) {}

SnippetMaker::~SnippetMaker() = default;

std::string query_snippet(std::string_view plain_text, const ParsedQuery& query) {
    return SnippetMaker(query).snippet(plain_text);
}

std::string SnippetMaker::snippet(std::string_view plain_text) {
    WordMatcher& matcher = *matcher_;
    const ParsedQuery& query = query_;
    if (matcher.empty() || plain_text.empty()) return {};
    // The matches among the first kSnippetScanWords words, each with the word its passage
    // would start at (kSnippetLeadWords words before it).
    struct Hit {
        std::size_t word;        // index of the matched word
        int id;                  // which query term
        std::size_t from_word;   // index of the passage's first word
        std::size_t from_byte;   // and its offset in plain_text
        std::size_t from_bytes;  // and its length
    };
    std::vector<Hit> hits;
    words_.clear();
    lead_words(plain_text, matcher.leads(), kSnippetScanWords, words_);
    for (const WordSpan& w : words_) {
        const int id = matcher.match(plain_text.substr(w.begin, w.end - w.begin));
        if (id < 0) continue;
        const WordSpan from = word_before(plain_text, w.index, w.begin, kSnippetLeadWords);
        hits.push_back(Hit{w.index, id, from.index, from.begin, from.end - from.begin});
    }
    if (hits.empty()) return {};
    // The window of kSnippetWindowWords words starting at a match with the most distinct matched
    // words that are not stopwords, then the most distinct ones, then the most matches, earliest
    // first, counted as the window slides over the hits.
    std::vector<int> in_window(matcher.kinds(), 0);
    struct Counts {
        std::size_t content = 0, distinct = 0, total = 0;
        bool operator>(const Counts& o) const {
            if (content != o.content) return content > o.content;
            return distinct != o.distinct ? distinct > o.distinct : total > o.total;
        }
    };
    Counts now, top;
    std::size_t best = 0, end = 0;
    for (std::size_t s = 0; s < hits.size(); ++s) {
        for (; end < hits.size() && hits[end].word < hits[s].word + kSnippetWindowWords; ++end) {
            const int id = hits[end].id;
            if (in_window[static_cast<std::size_t>(id)]++ == 0) {
                ++now.distinct;
                now.content += matcher.content(id);
            }
            ++now.total;
        }
        if (now > top) best = s, top = now;
        if (--in_window[static_cast<std::size_t>(hits[s].id)] == 0) {
            --now.distinct;
            now.content -= matcher.content(hits[s].id);
        }
        --now.total;
    }
    const Hit& h = hits[best];
    std::size_t from = h.from_word;
    std::string_view rest = plain_text.substr(h.from_byte);
    // A long run without spaces (CJK): start shortly before the matched bigram.
    if (from == h.word && h.from_bytes > kSnippetChars * 2) {
        std::size_t back = cjk_lead(rest.substr(0, h.from_bytes), query);
        if (back > 0) {
            rest = rest.substr(back);
            from = 1;  // cut: starts with an ellipsis
        }
    }
    std::string out = truncate_text(rest, from > 0 ? kSnippetChars - 1 : kSnippetChars);
    return from > 0 ? "\xE2\x80\xA6" + out : out;
}

}  // namespace notesd
