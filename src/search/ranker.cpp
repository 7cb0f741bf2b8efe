#include "search/ranker.hpp"

#include <algorithm>
#include <cstring>

#include "index/positions.hpp"
#include "base/util.hpp"

namespace notesd {

bool ranks_before(const RankedNote& a, const RankedNote& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.updated_us != b.updated_us) return a.updated_us > b.updated_us;
    return a.id > b.id;
}

struct Ranker::FieldStats {
    double length = 0;
    std::vector<int> tf;   // per interned term
    /// Per interned term, its positions in the field, ascending (only when sequences are scored).
    std::vector<std::vector<int>> at;
};

Ranker::Ranker(ParsedQuery query, QueryStats stats, RankParams params)
    : query_(std::move(query)), stats_(std::move(stats)), params_(params) {
    avg_title_ = average_length(stats_.corpus.title_tokens, stats_.corpus.notes);
    avg_body_ = average_length(stats_.corpus.body_tokens, stats_.corpus.notes);
    compile();
}

int Ranker::intern(const std::string& term) {
    for (std::size_t i = 0; i < terms_.size(); ++i)
        if (terms_[i] == term) return static_cast<int>(i);
    terms_.push_back(term);
    leads_.set(lead_of(term.size(), term.data()));
    return static_cast<int>(terms_.size() - 1);
}

void Ranker::compile() {
    for (const Clause& c : query_.clauses) {
        Compiled k;
        k.kind = c.kind;
        const double base = query_weight(c.qtf, c.stop, params_);
        if (c.kind == ClauseKind::Term || c.kind == ClauseKind::Prefix) {
            k.alts.push_back(Alt{intern(c.terms[0]), base * idf(df_of(c.terms[0]))});
        }
        if (c.kind == ClauseKind::Prefix) {
            std::size_t taken = 0;
            for (const auto& e : stats_.expansions) {
                if (taken == kMaxPrefixExpansions) break;
                if (e == c.terms[0] || e.compare(0, c.prefix.size(), c.prefix) != 0) continue;
                k.alts.push_back(Alt{intern(e), base * params_.prefix_weight * idf(df_of(e))});
                ++taken;
            }
        }
        if (c.kind == ClauseKind::Phrase || c.kind == ClauseKind::Proximity) {
            double sum = 0;
            for (const auto& t : c.terms) {
                k.seq.push_back(intern(t));
                sum += idf(df_of(t));
            }
            const double w = c.kind == ClauseKind::Phrase ? params_.phrase_weight : params_.proximity_weight;
            k.weight = base * w * sum;
        }
        compiled_.push_back(std::move(k));
    }
}

Ranker::FieldStats Ranker::scan(std::string_view stored) const {
    FieldStats f;
    f.tf.assign(terms_.size(), 0);
    const bool need_positions = needs_positions();
    if (need_positions) f.at.resize(terms_.size());
    std::size_t count = 0;
    const char* p = stored.data();
    const char* const end = p + stored.size();
    while (p < end) {
        if (*p == ' ') {
            ++p;
            continue;
        }
        const char* q = find_space(p + 1, end);
        const std::size_t len = static_cast<std::size_t>(q - p);
        int id = -1;
        if (leads_.test(lead_of(len, p)))
            for (std::size_t t = 0; t < terms_.size(); ++t)
                if (terms_[t].size() == len && std::memcmp(p, terms_[t].data(), len) == 0) {
                    id = static_cast<int>(t);
                    break;
                }
        if (id >= 0) {
            ++f.tf[id];
            if (need_positions) f.at[static_cast<std::size_t>(id)].push_back(static_cast<int>(count));
        }
        ++count;
        p = q;
    }
    f.length = static_cast<double>(count);
    return f;
}

// Sequences are only searched for in fields that hold each of their terms.
bool Ranker::has_all(const FieldStats& f, const std::vector<int>& seq) {
    for (int t : seq)
        if (f.tf[t] == 0) return false;
    return true;
}

// What scoring reads of one note, from its stored terms (scan) or its postings (Candidate).
struct Ranker::Features {
    double len_t = 0, len_b = 0;
    const int* tf_t = nullptr;  ///< per interned term; -1 when unknown
    const int* tf_b = nullptr;
    const FieldStats* title = nullptr;  ///< positions, when scanned: sequences are counted
    const FieldStats* body = nullptr;
    const std::string* positions = nullptr;  ///< per interned term, from postings (positions.hpp)
};

// The formula is score.hpp's; the averages are this user's.
double Ranker::saturate(double tf_title, double tf_body, const Features& f) const {
    return bm25f(tf_title, tf_body, f.len_t, f.len_b, avg_title_, avg_body_, params_);
}

namespace {

// The most occurrences a sequence can have in a field from its terms' counts there (-1:
// unknown, then at most the field length): a phrase occurrence holds each of its terms at its
// own position; a proximity pair counts its first term's occurrences, and only when the
// second one occurs at all.
int sequence_bound(ClauseKind kind, const std::vector<int>& seq, const int* tf, double len) {
    auto count = [&](int t) { return tf[t] < 0 ? static_cast<int>(len) : tf[t]; };
    if (kind == ClauseKind::Proximity) return count(seq[1]) == 0 ? 0 : count(seq[0]);
    int bound = static_cast<int>(len);
    for (int t : seq) bound = std::min(bound, count(t));
    return bound;
}

}  // namespace

namespace {

// Occurrences of seq in one field from its terms' ascending positions there (at[k] for seq[k]):
// a phrase where each next word is at the next position, a proximity pair where the second
// word follows the first within `window` positions. Stored terms and postings positions are
// counted by this one function, so both give the same score.
int count_positions(const std::vector<const std::vector<int>*>& at, int window) {
    int n = 0;
    for (int p : *at[0]) {
        if (window <= 1) {
            bool all = true;
            for (std::size_t k = 1; k < at.size() && all; ++k)
                all = std::binary_search(at[k]->begin(), at[k]->end(), p + static_cast<int>(k));
            n += all;
        } else {
            auto q = std::upper_bound(at[1]->begin(), at[1]->end(), p);
            n += q != at[1]->end() && *q <= p + window;
        }
    }
    return n;
}

}  // namespace

// A sequence clause's counts in the title and body from the postings' positions; false when a
// term's count or positions are unknown (the stored terms must decide).
bool Ranker::sequence_from_positions(const Compiled& k, const Features& f, int& ct, int& cb) const {
    const std::size_t n = k.seq.size();
    std::vector<std::vector<int>> title(n), body(n);
    std::vector<const std::vector<int>*> at_t(n), at_b(n);
    bool in_title = true, in_body = true;
    for (std::size_t i = 0; i < n; ++i) {
        const int t = k.seq[i];
        if (f.tf_t[t] < 0 || f.tf_b[t] < 0) return false;
        if (f.tf_t[t] + f.tf_b[t] > 0 &&
            !decode_positions(f.positions[t], f.tf_t[t], f.tf_b[t], title[i], body[i]))
            return false;
        in_title &= f.tf_t[t] > 0;
        in_body &= f.tf_b[t] > 0;
        at_t[i] = &title[i];
        at_b[i] = &body[i];
    }
    const int window = k.kind == ClauseKind::Phrase ? 1 : params_.proximity_window;
    ct = in_title ? count_positions(at_t, window) : 0;
    cb = in_body ? count_positions(at_b, window) : 0;
    return true;
}

// A Term or Prefix clause's alternatives as far as f's counts tell. An unknown alternative is
// worth at most its weight with every term of the note being it; a known match worth at least
// that settles the clause without it (a prefix's rare expansion found the note: its frequent
// siblings need no lookup). evaluate() and open_terms() decide by this one rule.
Ranker::AltValues Ranker::alt_values(const Compiled& k, const Features& f) const {
    AltValues v;
    for (const Alt& a : k.alts) {
        const int tt = f.tf_t[a.term], tb = f.tf_b[a.term];
        if (tt < 0 || tb < 0) {
            if (v.whole < 0) v.whole = saturate(f.len_t, f.len_b, f);
            continue;
        }
        if (tt + tb == 0) continue;
        v.matched = true;
        v.best = std::max(v.best, a.weight * saturate(tt, tb, f));
    }
    return v;
}

// Clauses are summed in query order in both modes, so an exact estimate and a scan of the same
// note give the same floating-point sum. saturate grows with each count, so bounds stay bounds.
Estimate Ranker::evaluate(const Features& f) const {
    Estimate e;
    e.exact = true;
    double total = 0;
    for (const Compiled& k : compiled_) {
        if (k.kind == ClauseKind::Term || k.kind == ClauseKind::Prefix) {
            // The clause counts its best alternative; an unknown one counts at its bound
            // unless a known match settles the clause (alt_values).
            const AltValues v = alt_values(k, f);
            e.matched |= v.matched;
            double best = v.best, unknown = -1;
            bool open = false;
            for (const Alt& a : k.alts)
                if (f.tf_t[a.term] < 0 || f.tf_b[a.term] < 0) {
                    unknown = std::max(unknown, a.weight * v.whole);
                    open |= v.may_change(a.weight);
                }
            if (open) {
                e.exact = false;
                best = std::max(best, unknown);
            }
            total += best;
            continue;
        }
        int ct = 0, cb = 0;
        if (f.title) {
            const int window = k.kind == ClauseKind::Phrase ? 1 : params_.proximity_window;
            auto count = [&](const FieldStats& field) {
                if (!has_all(field, k.seq)) return 0;
                std::vector<const std::vector<int>*> at;
                for (int t : k.seq) at.push_back(&field.at[static_cast<std::size_t>(t)]);
                return count_positions(at, window);
            };
            ct = count(*f.title);
            cb = count(*f.body);
        } else if (!f.positions || !sequence_from_positions(k, f, ct, cb)) {
            ct = sequence_bound(k.kind, k.seq, f.tf_t, f.len_t);
            cb = sequence_bound(k.kind, k.seq, f.tf_b, f.len_b);
            if (ct + cb > 0) e.exact = false;
        }
        if (ct + cb == 0) continue;
        e.matched |= k.kind == ClauseKind::Phrase;
        total += k.weight * saturate(ct, cb, f);
    }
    e.score = total;
    return e;
}

std::optional<double> Ranker::score(std::string_view title_terms, std::string_view body_terms) const {
    const FieldStats t = scan(title_terms), b = scan(body_terms);
    const Estimate e = evaluate(Features{t.length, b.length, t.tf.data(), b.tf.data(), &t, &b});
    if (!e.matched) return std::nullopt;
    return e.score;
}

Estimate Ranker::estimate(const Candidate& c) const {
    return evaluate(Features{static_cast<double>(c.title_len), static_cast<double>(c.body_len),
                             c.title_tf.data(), c.body_tf.data(), nullptr, nullptr,
                             c.positions.size() == terms_.size() ? c.positions.data() : nullptr});
}

std::vector<Ranker::OpenTerm> Ranker::open_terms(const std::vector<Candidate>& cands) const {
    std::vector<std::size_t> need(terms_.size(), 0);
    std::vector<char> needs(terms_.size());
    for (const Candidate& c : cands) {
        std::fill(needs.begin(), needs.end(), 0);
        const Features f{static_cast<double>(c.title_len), static_cast<double>(c.body_len),
                         c.title_tf.data(), c.body_tf.data()};
        for (const Compiled& k : compiled_) {
            if (k.kind != ClauseKind::Term && k.kind != ClauseKind::Prefix) {
                for (int t : k.seq) needs[static_cast<std::size_t>(t)] |= c.title_tf[t] < 0;
                continue;
            }
            const AltValues v = alt_values(k, f);
            for (const Alt& a : k.alts)
                if ((c.title_tf[a.term] < 0 || c.body_tf[a.term] < 0) && v.may_change(a.weight))
                    needs[static_cast<std::size_t>(a.term)] = 1;
        }
        for (std::size_t t = 0; t < terms_.size(); ++t) need[t] += needs[t];
    }
    std::vector<OpenTerm> out;
    for (std::size_t t = 0; t < terms_.size(); ++t)
        if (need[t] > 0 && df_of(terms_[t]) > 0) out.push_back(OpenTerm{terms_[t], need[t]});
    return out;
}

}  // namespace notesd
