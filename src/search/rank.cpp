#include "search/rank.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_set>

#include "index/positions.hpp"
#include "base/util.hpp"

namespace notesd {
namespace detail {
namespace {

// Function words: they keep matching and stay indexed, they just weigh little in the score.
bool is_stopword(std::string_view surface) {
    static const std::unordered_set<std::string_view> kStop = {
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "do", "does",
        "for", "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "not",
        "of", "on", "or", "such", "that", "the", "their", "there", "these", "this", "to", "was",
        "what", "when", "where", "which", "who", "why", "will", "with", "were", "would", "any"};
    return kStop.count(surface) != 0;
}

struct Segment {
    std::string text;
    bool quoted = false;
};

// Length of a quote character at s[i] (" “ ” „ ＂), or 0.
std::size_t quote_at(std::string_view s, std::size_t i) {
    if (s[i] == '"') return 1;
    if (i + 2 < s.size()) {
        const auto b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]),
                   b2 = static_cast<unsigned char>(s[i + 2]);
        if (b0 == 0xE2 && b1 == 0x80 && (b2 == 0x9C || b2 == 0x9D || b2 == 0x9E)) return 3;
        if (b0 == 0xEF && b1 == 0xBC && b2 == 0x82) return 3;
    }
    return 0;
}

// Alternating unquoted/quoted segments; an unclosed quote runs to the end of the text.
std::vector<Segment> split_quotes(std::string_view q) {
    std::vector<Segment> out(1);
    for (std::size_t i = 0; i < q.size();) {
        if (std::size_t n = quote_at(q, i)) {
            const bool quoted = !out.back().quoted;
            out.push_back(Segment{std::string(), quoted});
            i += n;
        } else {
            out.back().text.push_back(q[i++]);
        }
    }
    return out;
}

class QueryBuilder {
public:
    explicit QueryBuilder(const AnalyzeOptions& opts) : opts_(opts) {}

    void add_segment(const Segment& seg) {
        const auto tokens = analyze(seg.text, opts_);
        if (tokens.empty()) return;
        if (seg.quoted) {
            add_sequence(tokens, 0, tokens.size());
            last_ = -1;  // a trailing phrase is never a prefix
            return;
        }
        int prev_word = -1;  // last non-stop word token, for proximity pairs
        for (std::size_t i = 0; i < tokens.size();) {
            const Token& t = tokens[i];
            if (t.kind == TokenKind::Word) {
                last_ = add_term(t.term, is_stopword(t.surface));
                last_surface_ = t.surface;
                last_cjk_ = false;
                if (!is_stopword(t.surface)) {
                    if (prev_word >= 0) add_proximity(tokens[prev_word].term, t.term);
                    prev_word = static_cast<int>(i);
                }
                ++i;
                continue;
            }
            std::size_t j = i + 1;
            while (j < tokens.size() && tokens[j].joined) ++j;
            last_ = add_sequence(tokens, i, j);
            // a lone CJK character may stand for the bigrams it starts; longer runs already match
            // any substring, so they need no prefix
            last_surface_ = t.kind == TokenKind::CjkSingle ? t.surface : std::string();
            last_cjk_ = true;
            prev_word = -1;
            i = j;
        }
    }

    ParsedQuery finish() {
        if (last_ >= 0 && !last_surface_.empty() && q_.clauses[last_].kind == ClauseKind::Term) {
            Clause& c = q_.clauses[last_];
            if (last_cjk_ || utf8_length(last_surface_) >= kMinPrefixChars) {
                c.kind = ClauseKind::Prefix;
                c.prefix = last_surface_;
            }
        }
        return std::move(q_);
    }

private:
    std::size_t main_clauses() const { return q_.clauses.size() - proximity_; }

    int find(ClauseKind kind, const std::vector<std::string>& terms) const {
        for (std::size_t i = 0; i < q_.clauses.size(); ++i)
            if (q_.clauses[i].kind == kind && q_.clauses[i].terms == terms) return static_cast<int>(i);
        return -1;
    }

    int add_clause(ClauseKind kind, std::vector<std::string> terms, bool stop) {
        if (int i = find(kind, terms); i >= 0) {
            ++q_.clauses[i].qtf;
            return i;
        }
        if (kind == ClauseKind::Proximity ? proximity_ >= kMaxProximityClauses
                                          : main_clauses() >= kMaxQueryClauses)
            return -1;
        if (kind == ClauseKind::Proximity) ++proximity_;
        Clause c;
        c.kind = kind;
        c.terms = std::move(terms);
        c.stop = stop;
        q_.clauses.push_back(std::move(c));
        return static_cast<int>(q_.clauses.size() - 1);
    }

    int add_term(const std::string& term, bool stop) { return add_clause(ClauseKind::Term, {term}, stop); }

    void add_proximity(const std::string& a, const std::string& b) {
        if (a != b) add_clause(ClauseKind::Proximity, {a, b}, false);
    }

    // Tokens [i, j) as one unit: a single term, or a phrase of adjacent terms.
    int add_sequence(const std::vector<Token>& tokens, std::size_t i, std::size_t j) {
        if (j - i == 1) return add_term(tokens[i].term, is_stopword(tokens[i].surface));
        std::vector<std::string> terms;
        for (std::size_t k = i; k < j; ++k) terms.push_back(tokens[k].term);
        return add_clause(ClauseKind::Phrase, std::move(terms), false);
    }

    AnalyzeOptions opts_;
    ParsedQuery q_;
    std::size_t proximity_ = 0;
    int last_ = -1;  // clause of the query's last token while it may become a prefix
    std::string last_surface_;
    bool last_cjk_ = false;
};

}  // namespace
}  // namespace detail

bool ParsedQuery::empty() const {
    for (const auto& c : clauses)
        if (c.kind != ClauseKind::Proximity) return false;
    return true;
}

std::vector<std::string> ParsedQuery::lookup_terms() const {
    std::vector<std::string> out;
    for (const auto& c : clauses) out.insert(out.end(), c.terms.begin(), c.terms.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string ParsedQuery::prefix() const {
    for (const auto& c : clauses)
        if (c.kind == ClauseKind::Prefix) return c.prefix;
    return {};
}

std::string ParsedQuery::canonical() const {
    static const char kKind[] = {'t', 'p', 'q', 'n'};
    std::string out;
    for (const auto& c : clauses) {
        out.push_back(kKind[static_cast<int>(c.kind)]);
        out += std::to_string(c.qtf);
        for (const auto& t : c.terms) out += " " + t;
        if (!c.prefix.empty()) out += " *" + c.prefix;
        out.push_back('\n');
    }
    return out;
}

ParsedQuery parse_query(std::string_view text, const AnalyzeOptions& opts) {
    detail::QueryBuilder b(opts);
    for (const auto& seg : detail::split_quotes(text)) b.add_segment(seg);
    return b.finish();
}

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
    const long long n = std::max(1LL, stats_.corpus.notes);
    avg_title_ = std::max(1.0, static_cast<double>(stats_.corpus.title_tokens) / static_cast<double>(n));
    avg_body_ = std::max(1.0, static_cast<double>(stats_.corpus.body_tokens) / static_cast<double>(n));
    compile();
}

int Ranker::intern(const std::string& term) {
    for (std::size_t i = 0; i < terms_.size(); ++i)
        if (terms_[i] == term) return static_cast<int>(i);
    terms_.push_back(term);
    leads_.set(lead_of(term.size(), term.data()));
    return static_cast<int>(terms_.size() - 1);
}

long long Ranker::df_of(const std::string& term) const {
    auto it = stats_.df.find(term);
    return it == stats_.df.end() ? 0 : it->second;
}

// Okapi idf with the +1 inside the log, so it stays positive for terms in most notes.
double Ranker::idf(long long df) const {
    const long long n = std::max(1LL, stats_.corpus.notes);
    const double d = static_cast<double>(std::clamp(df, 0LL, n));
    return std::log(1.0 + (static_cast<double>(n) - d + 0.5) / (d + 0.5));
}

// Query-side weight: stopwords count little, repetition counts with saturation (k3 = 1).
double Ranker::clause_base_weight(const Clause& c) const {
    const double qtf = 2.0 * c.qtf / (1.0 + c.qtf);
    return (c.stop ? params_.stop_weight : 1.0) * qtf;
}

void Ranker::compile() {
    for (const Clause& c : query_.clauses) {
        Compiled k;
        k.kind = c.kind;
        const double base = clause_base_weight(c);
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

// What scoring reads of one note, from its stored terms (scan) or its postings (Candidate).
struct Ranker::Features {
    double len_t = 0, len_b = 0;
    const int* tf_t = nullptr;  ///< per interned term; -1 when unknown
    const int* tf_b = nullptr;
    const FieldStats* title = nullptr;  ///< positions, when scanned: sequences are counted
    const FieldStats* body = nullptr;
    const std::string* positions = nullptr;  ///< per interned term, from postings (positions.hpp)
};

// BM25F: field-weighted, length-normalised term frequency, saturated once across fields.
double Ranker::saturate(double tf_title, double tf_body, const Features& f) const {
    const RankParams& p = params_;
    const double nt = 1.0 - p.title_b + p.title_b * f.len_t / avg_title_;
    const double nb = 1.0 - p.body_b + p.body_b * f.len_b / avg_body_;
    const double tf = p.title_weight * tf_title / nt + p.body_weight * tf_body / nb;
    return tf * (p.k1 + 1.0) / (p.k1 + tf);
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

bool Ranker::needs_positions() const {
    for (const Compiled& k : compiled_)
        if (!k.seq.empty()) return true;
    return false;
}

int Ranker::term_index(const std::string& term) const {
    for (std::size_t i = 0; i < terms_.size(); ++i)
        if (terms_[i] == term) return static_cast<int>(i);
    return -1;
}

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

std::vector<Candidate> Ranker::bound_candidates(const std::vector<RetrievalUnit>& units,
                                                const std::vector<std::vector<Posting>>& postings,
                                                const std::vector<bool>& complete,
                                                std::size_t max_candidates) const {
    struct Entry {
        const Posting* first = nullptr;  // any posting of the note: its id, time and lengths
        double pre = 0;
        std::size_t clause = SIZE_MAX;  // clause of `pending`
        double pending = 0;             // best unit weight of that clause so far
        std::uint32_t last_hit = UINT32_MAX;
    };
    struct Hit {  // a (note, term) posting, chained per note
        int term = -1;
        const Posting* posting = nullptr;
        std::uint32_t prev = UINT32_MAX;
    };
    const std::size_t n_units = std::min(units.size(), postings.size());
    std::vector<std::size_t> order(n_units);
    for (std::size_t u = 0; u < n_units; ++u) order[u] = u;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return units[a].clause < units[b].clause; });
    // a clause counts once per note (its best unit), and clauses add up in clause order so the
    // floating sum is the same whatever order the postings arrived in
    std::size_t total = 0;
    for (std::size_t u = 0; u < n_units; ++u) total += postings[u].size();
    std::vector<Entry> entries;
    std::vector<Hit> hits;
    entries.reserve(total);
    hits.reserve(total);
    NoteSlots index(total);  // note -> entry
    auto entry_of = [&](const Posting& p) -> Entry& {
        std::uint32_t& at = index.slot(p.uid_hi, p.uid_lo, [&](std::uint32_t e) {
            return entries[e].first->uid_hi == p.uid_hi && entries[e].first->uid_lo == p.uid_lo;
        });
        if (at == UINT32_MAX) {
            at = static_cast<std::uint32_t>(entries.size());
            entries.push_back(Entry{&p});
        }
        return entries[at];
    };
    for (std::size_t u : order) {
        const RetrievalUnit& unit = units[u];
        const int term = term_index(unit.term);
        for (const Posting& p : postings[u]) {
            Entry& e = entry_of(p);
            if (e.clause != unit.clause) {
                e.pre += e.pending;
                e.clause = unit.clause;
                e.pending = unit.weight;
            } else {
                e.pending = std::max(e.pending, unit.weight);
            }
            hits.push_back(Hit{term, &p, e.last_hit});
            e.last_hit = static_cast<std::uint32_t>(hits.size() - 1);
        }
    }
    // The order of the cut, on contiguous keys (a comparison through entries and postings
    // missed the cache at every step).
    struct Key {
        double s;
        long long us, hi, lo;
        std::uint32_t entry;
    };
    auto before = [](const Key& x, const Key& y) {
        if (x.s != y.s) return x.s > y.s;
        if (x.us != y.us) return x.us > y.us;
        if (x.hi != y.hi) return x.hi > y.hi;
        return x.lo > y.lo;
    };
    std::vector<Key> all(entries.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) {
        const Entry& e = entries[i];
        all[i] = Key{e.pre + e.pending, e.first->updated_us, e.first->uid_hi, e.first->uid_lo, i};
    }
    const std::size_t keep = std::min(max_candidates, all.size());
    // One unit's postings arrive in this order already (equal pre-scores, key order): no sort.
    if (!std::is_sorted(all.begin(), all.end(), before)) {
        const auto cut = all.begin() + static_cast<std::ptrdiff_t>(keep);
        if (cut != all.end()) std::nth_element(all.begin(), cut, all.end(), before);
        std::sort(all.begin(), cut, before);
    }
    // Terms whose whole (filtered) list was read: a candidate not in it has none of them.
    std::vector<int> unknown_or_zero(terms_.size(), -1);
    for (std::size_t t = 0; t < terms_.size(); ++t)
        if (df_of(terms_[t]) == 0) unknown_or_zero[t] = 0;  // in none of the user's notes
    for (std::size_t u = 0; u < n_units; ++u)
        if (u < complete.size() && complete[u])
            if (const int t = term_index(units[u].term); t >= 0) unknown_or_zero[t] = 0;
    // Positions only matter to phrase and proximity clauses: without them a candidate holds
    // none (estimate() and add_counts() then skip them).
    const std::size_t n_positions = needs_positions() ? terms_.size() : 0;
    std::vector<Candidate> out;
    out.reserve(keep);
    for (std::size_t i = 0; i < keep; ++i) {
        const Entry& e = entries[all[i].entry];
        Candidate c{e.first->uid_hi, e.first->uid_lo, e.first->updated_us, e.first->title_len,
                    e.first->body_len, unknown_or_zero, unknown_or_zero,
                    std::vector<std::string>(n_positions)};
        for (std::uint32_t h = e.last_hit; h != UINT32_MAX; h = hits[h].prev)
            if (const int t = hits[h].term; t >= 0) {
                c.title_tf[t] = hits[h].posting->title_tf;
                c.body_tf[t] = hits[h].posting->body_tf;
                if (n_positions) c.positions[t] = hits[h].posting->positions;
            }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace notesd
