#include "search/snippet.hpp"

#include <deque>
#include <unordered_map>

#include "index/text.hpp"

namespace notesd {
namespace {

constexpr std::size_t kSnippetChars = 200;
constexpr std::size_t kSnippetWindowWords = 24;
constexpr std::size_t kSnippetScanWords = 4000;  // bounds the work per result
constexpr std::size_t kSnippetLeadWords = 3;     // context kept before the first match

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
