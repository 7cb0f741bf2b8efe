// Relevance ranking shared by every storage backend. The database only finds candidate notes
// (by exact stored terms); everything that decides order happens here, from integer
// statistics, so the same data and query give bit-identical scores on every backend.
#pragma once
#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/model.hpp"
#include "search/query.hpp"
#include "search/score.hpp"

namespace notesd {

struct QueryStats {
    CorpusStats corpus;
    /// Notes of the user containing each term (title or body); a missing term counts as 0.
    std::unordered_map<std::string, long long> df;
    /// Stored terms starting with ParsedQuery::prefix(), at most kMaxPrefixExpansions, chosen by
    /// df descending then term ascending; their df must be in `df` too.
    std::vector<std::string> expansions;
};

/// A term whose postings (notes containing it) the caller fetches to find candidates.
struct RetrievalUnit {
    std::string term;
    std::size_t clause = 0;  ///< index into ParsedQuery::clauses
    long long df = 0;
    double weight = 0;       ///< the unit's share of the cheap pre-score
};

/// One posting row as the caller fetched it (the store's TermPosting); each unit's list is
/// capped, most recently updated first (updated_us desc, id desc).
using Posting = TermPosting;

/// A candidate note and what the postings read tell about it: for every term the ranker
/// knows (Ranker::term_count), its counts in the title and body, or -1 when the postings read
/// cannot tell (the term found no candidates, or its list was cut), and the positions its
/// posting carried (positions.hpp; empty when unknown or the term is not in the note).
struct Candidate {
    long long uid_hi = 0, uid_lo = 0;  ///< util.hpp's uuid_halves: their order is the id order
    long long updated_us = 0;
    int title_len = 0, body_len = 0;
    std::vector<int> title_tf, body_tf;
    std::vector<std::string> positions;
};

/// A candidate's score from its postings: exact, or an upper bound when the stored terms are
/// needed (an unknown count or unknown positions, with a phrase or proximity clause that may
/// match).
struct Estimate {
    double score = 0;
    bool exact = false;
    bool matched = false;  ///< when exact: whether the note matches the query at all
};

struct RankedNote {
    std::string id;
    long long updated_us = 0;
    double score = 0;
};

/// Final order: score desc, then updated_us desc, then id desc.
bool ranks_before(const RankedNote& a, const RankedNote& b);

/// One query compiled for scoring: its terms interned, its clauses weighted by the user's
/// statistics. Scores notes from stored terms (score) or from postings (estimate); its
/// candidate bookkeeping (retrieval_plan, bound_candidates, add_counts) is in topk.cpp.
class Ranker {
public:
    Ranker(ParsedQuery query, QueryStats stats, RankParams params = {});

    /// Which terms find candidates: rarest first while their summed df stays within
    /// posting_budget (the rarest one always); frequent terms then only score, never recruit.
    std::vector<RetrievalUnit> retrieval_plan(long long posting_budget) const;

    /// Union of the units' postings, pre-scored by matched clause weights, cut to the best
    /// max_candidates (pre-score desc, updated_us desc, id desc), in that order. complete[u]
    /// says list u holds every posting of its term that passes the filters, so a candidate
    /// missing from it does not contain the term.
    std::vector<Candidate> bound_candidates(const std::vector<RetrievalUnit>& units,
                                            const std::vector<std::vector<Posting>>& postings,
                                            const std::vector<bool>& complete,
                                            std::size_t max_candidates) const;

    /// A term some candidates lack a count for and need it (see open_terms).
    struct OpenTerm {
        std::string term;
        std::size_t candidates = 0;  ///< how many of them need it
    };
    /// Terms of the query (df > 0) whose count some candidate lacks (-1) and needs: every
    /// unknown term, except a prefix expansion that a known match of its clause already
    /// outweighs (estimate() is exact without it). In query order.
    std::vector<OpenTerm> open_terms(const std::vector<Candidate>& cands) const;
    /// Records the counts of `term` from more of its postings: a candidate found in them gets
    /// its counts; when `complete` (every posting of the term that could belong to one of the
    /// candidates was read) the others get 0.
    void add_counts(std::vector<Candidate>& cands, const std::string& term,
                    const std::vector<Posting>& more, bool complete) const;

    /// The candidate's score as far as its postings decide it (see Estimate).
    Estimate estimate(const Candidate& c) const;

    /// BM25F score of one candidate from its stored term strings (FieldIndex::terms); nullopt when
    /// no clause matches (e.g. a quoted phrase whose words are only found apart). Equal, bit for
    /// bit, to estimate() of the same note whenever that is exact.
    std::optional<double> score(std::string_view title_terms, std::string_view body_terms) const;

    const ParsedQuery& query() const { return query_; }
    /// Whether scoring reads word positions (the query has a phrase or proximity clause);
    /// without, postings may come without them.
    bool needs_positions() const {
        for (const Compiled& k : compiled_)
            if (!k.seq.empty()) return true;
        return false;
    }
    /// The user's notes containing `term` (0 for a term the query does not hold).
    long long df_of(const std::string& term) const {
        auto it = stats_.df.find(term);
        return it == stats_.df.end() ? 0 : it->second;
    }

private:
    struct Alt {
        int term = -1;      ///< index into terms_
        double weight = 0;  ///< clause weight x idf (x prefix discount)
    };
    struct Compiled {
        ClauseKind kind = ClauseKind::Term;
        std::vector<Alt> alts;  ///< Term: 1; Prefix: exact + expansions (best one counts)
        std::vector<int> seq;   ///< Phrase/Proximity: term indexes in order
        double weight = 0;      ///< Phrase/Proximity: weight x summed idf
    };
    struct FieldStats;
    struct Features;

    int intern(const std::string& term);
    double idf(long long df) const { return okapi_idf(df, stats_.corpus.notes); }
    void compile();
    FieldStats scan(std::string_view stored) const;
    static bool has_all(const FieldStats& f, const std::vector<int>& seq);
    bool sequence_from_positions(const Compiled& k, const Features& f, int& ct, int& cb) const;
    double saturate(double tf_title, double tf_body, const Features& f) const;
    /// What a Term or Prefix clause's alternatives are worth from the known counts.
    struct AltValues {
        double best = 0;       ///< the best known match (0: none)
        bool matched = false;  ///< a known alternative occurs in the note
        double whole = -1;     ///< an unknown alternative's bound over its weight (-1: none unknown)
        /// Whether an unknown alternative of this weight could still change the clause's value.
        bool may_change(double weight) const { return !(best > 0 && weight * whole <= best); }
    };
    AltValues alt_values(const Compiled& k, const Features& f) const;
    Estimate evaluate(const Features& f) const;
    int term_index(const std::string& term) const {
        for (std::size_t i = 0; i < terms_.size(); ++i)
            if (terms_[i] == term) return static_cast<int>(i);
        return -1;
    }

    ParsedQuery query_;
    QueryStats stats_;
    RankParams params_;
    std::vector<std::string> terms_;
    // Term lookup while scanning stored text: a token whose (length, first two bytes) no term
    // has is rejected by one bit test; the few others are compared with the terms.
    /// The filter's bit of a (length, first two bytes) pair, hashed: 8 KiB that stay in cache.
    static std::size_t lead_of(std::size_t len, const char* p) {
        const std::size_t two = static_cast<unsigned char>(p[0]) |
                                (len > 1 ? static_cast<std::size_t>(static_cast<unsigned char>(p[1])) << 8 : 0);
        return (two ^ (len * 0x9E5u)) & 0xFFFF;
    }
    std::bitset<1 << 16> leads_;
    std::vector<Compiled> compiled_;
    double avg_title_ = 1;
    double avg_body_ = 1;
};

}  // namespace notesd
