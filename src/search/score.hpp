// The BM25F formula, and nothing else: how much one clause of a query is worth in one note,
// from integer counts. Everything that decides an order computes it through these functions.
//
// Monotonicity contract. bm25f() never decreases when tf_title or tf_body grows (the field
// lengths and averages fixed), and every clause weight is >= 0. The top-k search relies on it
// and nothing else: a bound on a note's counts (a term count not yet read counted as the whole
// field) gives a bound on its score (Ranker::estimate), so candidates can be cut and skipped
// without reading them (topk.cpp). A formula that breaks it breaks the exact top-k silently.
//
// The functions are inline: they run for every clause of every candidate.
#pragma once
#include <algorithm>
#include <cmath>

namespace notesd {

/// Per-user integer statistics (another user's notes never enter them).
struct CorpusStats {
    long long notes = 0;         ///< the user's note count
    long long title_tokens = 0;  ///< sum of FieldIndex::length over the user's titles
    long long body_tokens = 0;   ///< sum over the user's bodies
};

struct RankParams {
    double k1 = 1.2;
    double title_weight = 3.0;  ///< BM25F field weights: a title match outweighs a body match
    double body_weight = 1.0;
    double title_b = 0.5;
    double body_b = 0.75;
    double stop_weight = 0.2;
    double prefix_weight = 0.5;      ///< an expansion other than the exact stem
    double phrase_weight = 1.0;
    double proximity_weight = 0.15;
    int proximity_window = 3;        ///< ordered, at most this many positions apart
};

/// A field's average length over the user's notes (at least 1, also for an empty corpus).
inline double average_length(long long tokens, long long notes) {
    const long long n = std::max(1LL, notes);
    return std::max(1.0, static_cast<double>(tokens) / static_cast<double>(n));
}

/// Okapi idf with the +1 inside the log, so it stays positive for terms in most notes.
inline double okapi_idf(long long df, long long notes) {
    const long long n = std::max(1LL, notes);
    const double d = static_cast<double>(std::clamp(df, 0LL, n));
    return std::log(1.0 + (static_cast<double>(n) - d + 0.5) / (d + 0.5));
}

/// Query-side weight of a clause: stopwords count little, repetition counts with saturation
/// (k3 = 1).
inline double query_weight(int qtf, bool stop, const RankParams& p) {
    const double saturated_qtf = 2.0 * qtf / (1.0 + qtf);
    return (stop ? p.stop_weight : 1.0) * saturated_qtf;
}

/// BM25F: field-weighted, length-normalised term frequency, saturated once across fields.
/// Multiplied by a clause weight it is the clause's score (see the contract above).
inline double bm25f(double tf_title, double tf_body, double title_length, double body_length,
                    double avg_title, double avg_body, const RankParams& p) {
    const double nt = 1.0 - p.title_b + p.title_b * title_length / avg_title;
    const double nb = 1.0 - p.body_b + p.body_b * body_length / avg_body;
    const double tf = p.title_weight * tf_title / nt + p.body_weight * tf_body / nb;
    return tf * (p.k1 + 1.0) / (p.k1 + tf);
}

}  // namespace notesd
