#include "search/query.hpp"

#include <algorithm>
#include <unordered_set>

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

}  // namespace notesd
