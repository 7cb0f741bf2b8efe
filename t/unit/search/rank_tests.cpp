#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "index/positions.hpp"
#include "search/rank.hpp"
#include "search/search.hpp"
#include "search/word_scan.hpp"

using namespace notesd;

namespace {

// A one-user corpus kept the way the store keeps it: stored term strings and integer statistics.
struct Corpus {
    struct Note {
        std::string id;
        long long updated_us;
        FieldIndex title, body;
    };
    std::vector<Note> notes;

    void add(const std::string& id, std::string_view title, std::string_view body, long long updated = 0) {
        notes.push_back(Note{id, updated, index_field(title), index_field(body)});
    }

    long long df(const std::string& term) const {
        long long n = 0;
        for (const auto& note : notes) {
            auto a = split_terms(note.title.terms), b = split_terms(note.body.terms);
            n += std::count(a.begin(), a.end(), term) + std::count(b.begin(), b.end(), term) > 0;
        }
        return n;
    }

    QueryStats stats(const ParsedQuery& q) const {
        QueryStats s;
        s.corpus.notes = static_cast<long long>(notes.size());
        for (const auto& n : notes) {
            s.corpus.title_tokens += n.title.length;
            s.corpus.body_tokens += n.body.length;
        }
        for (const auto& t : q.lookup_terms()) s.df[t] = df(t);
        std::set<std::string> dict;
        for (const auto& n : notes)
            for (auto f : {&n.title, &n.body})
                for (auto t : split_terms(f->terms)) dict.insert(std::string(t));
        const std::string p = q.prefix();
        for (const auto& t : dict)
            if (!p.empty() && t.compare(0, p.size(), p) == 0 && s.expansions.size() < kMaxPrefixExpansions) {
                s.expansions.push_back(t);
                s.df[t] = df(t);
            }
        return s;
    }

    // Every note is a candidate here; the ranker decides what matches and in which order.
    std::vector<RankedNote> search(std::string_view query) const {
        ParsedQuery q = parse_query(query);
        Ranker r(q, stats(q));
        std::vector<RankedNote> out;
        for (const auto& n : notes)
            if (auto s = r.score(n.title.terms, n.body.terms)) out.push_back(RankedNote{n.id, n.updated_us, *s});
        std::sort(out.begin(), out.end(), ranks_before);
        return out;
    }

    std::vector<std::string> ids(std::string_view query) const {
        std::vector<std::string> out;
        for (const auto& r : search(query)) out.push_back(r.id);
        return out;
    }
};

using V = std::vector<std::string>;

Corpus filler(Corpus c) {
    c.add("f1", "groceries", "milk bread eggs and butter");
    c.add("f2", "meeting notes", "discussed the roadmap and hiring");
    c.add("f3", "travel", "book flights and a hotel for the trip");
    return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rank)

BOOST_AUTO_TEST_CASE(parses_words_phrases_and_last_prefix) {
    const ParsedQuery q = parse_query("Running \"File Systems\" kuber");
    BOOST_REQUIRE_EQUAL(q.clauses.size(), 3u);
    BOOST_CHECK(q.clauses[0].kind == ClauseKind::Term);
    BOOST_CHECK(q.clauses[0].terms == V{"run"});
    BOOST_CHECK(q.clauses[1].kind == ClauseKind::Phrase);
    BOOST_CHECK(q.clauses[1].terms == (V{"file", "system"}));
    BOOST_CHECK(q.clauses[2].kind == ClauseKind::Prefix);
    BOOST_CHECK_EQUAL(q.clauses[2].prefix, "kuber");
    BOOST_CHECK_EQUAL(q.prefix(), "kuber");
    BOOST_CHECK(q.lookup_terms() == (V{"file", "kuber", "run", "system"}));
}

BOOST_AUTO_TEST_CASE(unclosed_quote_runs_to_the_end_and_phrase_is_never_prefix) {
    const ParsedQuery q = parse_query("alpha \u201Cbeta gamma");
    BOOST_REQUIRE_EQUAL(q.clauses.size(), 2u);
    BOOST_CHECK(q.clauses[1].kind == ClauseKind::Phrase);
    BOOST_CHECK(q.prefix().empty());
    BOOST_CHECK(parse_query("\"one\"").clauses[0].kind == ClauseKind::Term);
}

BOOST_AUTO_TEST_CASE(hostile_queries_are_plain_text) {
    const std::string emoji = [] {
        std::string s;
        for (int i = 0; i < 1000; ++i) s += "😀";
        return s;
    }();
    for (const std::string q : {"\"", "*", "-", "AND", "NEAR(", ":", ")(", "a OR b NOT c", "\"\"\"", "\xff"})
        BOOST_CHECK_NO_THROW(parse_query(q));
    BOOST_CHECK(parse_query(emoji).empty());
    BOOST_CHECK(parse_query("\"").empty());
    BOOST_CHECK(parse_query(")(").empty());
    const ParsedQuery near = parse_query("NEAR(");
    BOOST_REQUIRE(!near.empty());
    BOOST_CHECK(near.clauses[0].terms == V{"near"});
    Corpus c = filler(Corpus());
    c.add("n1", "and or not", "near the end");
    BOOST_CHECK(c.ids(emoji).empty());
    BOOST_CHECK(c.ids("AND").size() >= 1u);  // a stopword-only query still matches
    BOOST_CHECK(c.ids("NEAR(") == V{"n1"});
}

BOOST_AUTO_TEST_CASE(cjk_queries) {
    BOOST_CHECK(parse_query("東京").clauses[0].kind == ClauseKind::Term);
    BOOST_CHECK(parse_query("東京都").clauses[0].kind == ClauseKind::Phrase);
    BOOST_CHECK(parse_query("東").clauses[0].kind == ClauseKind::Prefix);
    Corpus c = filler(Corpus());
    c.add("jp", "出張", "東京都庁に行きました");
    c.add("kr", "약속", "서울에서 만나요");
    c.add("other", "京都", "京都の寺");
    BOOST_CHECK(c.ids("東京") == V{"jp"});
    BOOST_CHECK(c.ids("都庁") == V{"jp"});
    BOOST_CHECK(c.ids("行きました") == V{"jp"});
    BOOST_CHECK(c.ids("서울") == V{"kr"});
    BOOST_CHECK(c.ids("東京都") == V{"jp"});  // 京都 alone is not the phrase 東京都
}

BOOST_AUTO_TEST_CASE(folding_matches) {
    Corpus c = filler(Corpus());
    c.add("cafe", "cafe list", "the best cafe in town");
    c.add("abc", "letters", "abc");
    BOOST_CHECK(c.ids("Café") == V{"cafe"});
    BOOST_CHECK(c.ids("ＡＢＣ") == V{"abc"});
}

BOOST_AUTO_TEST_CASE(prefix_only_for_the_last_word) {
    Corpus c = filler(Corpus());
    c.add("k8s", "cluster", "we run kubernetes in production");
    BOOST_CHECK(c.ids("kuber") == V{"k8s"});
    BOOST_CHECK(c.ids("kuber xyzzy").empty());  // not last: an exact term only
    BOOST_CHECK(c.ids("kubernetes") == V{"k8s"});
}

BOOST_AUTO_TEST_CASE(phrases_need_adjacent_words) {
    // ids chosen so that a score tie would put the wrong note first (id descending)
    Corpus c = filler(Corpus());
    c.add("b_apart", "disk", "the system stores each file on disk");
    c.add("a_phrase", "disk", "the file system stores data on disk");
    BOOST_CHECK(c.ids("\"file system\"") == V{"a_phrase"});
    BOOST_CHECK(c.ids("\"file system stores\"") == V{"a_phrase"});
    BOOST_CHECK(c.ids("\"file system data\"").empty());
    // unquoted, both match, and adjacency ranks higher
    BOOST_CHECK(c.ids("file system") == (V{"a_phrase", "b_apart"}));
}

BOOST_AUTO_TEST_CASE(title_outweighs_body) {
    Corpus c = filler(Corpus());
    c.add("body", "weekly plan", "notes about kafka");
    c.add("title", "notes about kafka", "weekly plan");
    BOOST_CHECK(c.ids("kafka") == (V{"title", "body"}));
}

BOOST_AUTO_TEST_CASE(bm25_properties) {
    Corpus c = filler(Corpus());
    c.add("common1", "a", "apple common");
    c.add("common2", "b", "common");
    c.add("common3", "c", "common");
    c.add("rare", "d", "zebra");
    c.add("both", "e", "zebra apple");
    std::string longer = "zebra";
    for (int i = 0; i < 200; ++i) longer += " filler";
    c.add("long", "f", longer);
    auto r = c.search("common zebra");
    BOOST_REQUIRE(r.size() >= 4);
    // the rarer term weighs more: a note with only zebra beats one with only common
    auto pos = [&](const std::string& id) {
        for (std::size_t i = 0; i < r.size(); ++i)
            if (r[i].id == id) return i;
        return r.size();
    };
    BOOST_CHECK_LT(pos("rare"), pos("common2"));
    BOOST_CHECK_LT(pos("rare"), pos("long"));  // long notes are normalised
    auto two = c.search("zebra apple");
    BOOST_CHECK_EQUAL(two.at(0).id, "both");  // more matched terms rank higher
}

BOOST_AUTO_TEST_CASE(term_frequency_saturates) {
    Corpus c = filler(Corpus());
    c.add("one", "x", "rust");
    c.add("many", "x", "rust rust rust rust rust rust rust rust rust rust rust rust rust rust rust rust");
    auto r = c.search("rust");
    BOOST_REQUIRE_EQUAL(r.size(), 2u);
    BOOST_CHECK_GT(r[0].score, r[1].score);
    BOOST_CHECK_LT(r[0].score, 3.0 * r[1].score);
}

BOOST_AUTO_TEST_CASE(scores_are_deterministic_and_ties_break_by_time_then_id) {
    Corpus c = filler(Corpus());
    c.add("b", "same", "text", 5);
    c.add("a", "same", "text", 5);
    c.add("c", "same", "text", 9);
    auto r1 = c.search("same text");
    auto r2 = c.search("same text");
    BOOST_REQUIRE_EQUAL(r1.size(), 3u);
    BOOST_CHECK_EQUAL(r1[0].score, r2[0].score);  // bit-identical
    BOOST_CHECK(c.ids("same text") == (V{"c", "b", "a"}));
}

BOOST_AUTO_TEST_CASE(statistics_are_what_the_caller_gives) {
    // Another user's notes never enter: the same note scores the same whatever else exists
    // outside the supplied statistics.
    ParsedQuery q = parse_query("kafka");
    QueryStats s;
    s.corpus = CorpusStats{10, 20, 100};
    s.df["kafka"] = 2;
    const FieldIndex t = index_field("kafka"), b = index_field("stream");
    auto x = Ranker(q, s).score(t.terms, b.terms);
    auto y = Ranker(q, s).score(t.terms, b.terms);
    BOOST_REQUIRE(x && y);
    BOOST_CHECK_EQUAL(*x, *y);
    s.df["kafka"] = 9;
    BOOST_CHECK_LT(*Ranker(q, s).score(t.terms, b.terms), *x);
}

BOOST_AUTO_TEST_CASE(retrieval_plan_takes_rarest_terms_within_budget) {
    ParsedQuery q = parse_query("alpha beta \"gamma delta\" zzz");
    QueryStats s;
    s.corpus = CorpusStats{1000, 1000, 10000};
    s.df = {{"alpha", 500}, {"beta", 20}, {"gamma", 300}, {"delta", 40}, {"zzz", 0}};
    Ranker r(q, s);
    auto plan = r.retrieval_plan(100);
    BOOST_REQUIRE_EQUAL(plan.size(), 2u);
    BOOST_CHECK_EQUAL(plan[0].term, "beta");
    BOOST_CHECK_EQUAL(plan[1].term, "delta");  // the phrase's rarest word stands for it
    plan = r.retrieval_plan(1);
    BOOST_REQUIRE_EQUAL(plan.size(), 1u);  // the rarest always, even over budget
    plan = r.retrieval_plan(1000000);
    BOOST_CHECK_EQUAL(plan.size(), 3u);  // zzz has no postings, gamma is covered by delta
}

namespace {

// A posting of note n<k>: its uuid halves order like the ids "n1" < "n2" < ...
Posting posting(long long k, long long updated, int tt = 0, int tb = 1, int lt = 1, int lb = 10) {
    return Posting{k, 0, updated, tt, tb, lt, lb, {}};
}

std::vector<long long> note_numbers(const std::vector<Candidate>& v) {
    std::vector<long long> out;
    for (const auto& c : v) out.push_back(c.uid_hi);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(candidate_bound_prefers_prescore_then_recency) {
    ParsedQuery q = parse_query("rare common");
    QueryStats s;
    s.corpus = CorpusStats{100, 100, 1000};
    s.df = {{"rare", 2}, {"common", 50}};
    Ranker r(q, s);
    auto plan = r.retrieval_plan(1000);
    BOOST_REQUIRE_EQUAL(plan.size(), 2u);
    std::vector<std::vector<Posting>> post(2);
    post[0] = {posting(1, 1), posting(2, 2)};                  // rare
    post[1] = {posting(2, 2), posting(3, 9), posting(4, 9)};   // common
    const std::vector<bool> complete{true, true};
    auto c = r.bound_candidates(plan, post, complete, 3);
    BOOST_CHECK(note_numbers(c) == (std::vector<long long>{2, 1, 4}));
    BOOST_CHECK(r.bound_candidates(plan, post, complete, 10).size() == 4u);
    // n1 is in the complete list of "common" nowhere: it has none; n2 has both, exactly
    BOOST_CHECK(r.estimate(c[1]).exact);
    BOOST_CHECK(r.estimate(c[1]).matched);
    // without the complete flags n1's count of "common" is unknown: an upper bound only
    auto open = r.bound_candidates(plan, post, {false, false}, 3);
    BOOST_CHECK(!r.estimate(open[1]).exact);
    BOOST_CHECK_GE(r.estimate(open[1]).score, r.estimate(c[1]).score);
}

// The estimate from postings is the stored-terms score bit for bit when it says exact, and
// never below it otherwise, for terms, prefixes, phrases, proximity and unknown counts alike.
BOOST_AUTO_TEST_CASE(estimate_is_the_exact_score_or_an_upper_bound) {
    Corpus c;
    const char* words[] = {"alpha", "beta", "gamma", "delta", "file", "system", "kubernetes",
                           "kube", "cafe", "the", "of"};
    unsigned seed = 7;
    auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
    for (int i = 0; i < 60; ++i) {
        std::string title, body;
        for (unsigned k = next() % 4; k > 0; --k) title += std::string(words[next() % 11]) + " ";
        for (unsigned k = 1 + next() % 30; k > 0; --k) body += std::string(words[next() % 11]) + " ";
        c.add("n" + std::to_string(i), title, body, 1000 + i);
    }
    const char* queries[] = {"alpha", "alpha beta", "\"file system\"", "kube", "the cafe",
                             "gamma \"delta alpha\" syst", "beta beta of", "system file"};
    int exact = 0, bounded = 0, exact_from_positions = 0;
    for (const char* text : queries) {
        const ParsedQuery q = parse_query(text);
        Ranker r(q, c.stats(q));
        const auto plan = r.retrieval_plan(1000000);
        // with_positions: the rows carry where the term occurs, as the store writes them
        auto postings_of = [&](const std::string& term, bool with_positions) {
            std::vector<Posting> out;
            for (std::size_t i = 0; i < c.notes.size(); ++i) {
                const auto& n = c.notes[i];
                auto a = split_terms(n.title.terms), b = split_terms(n.body.terms);
                std::vector<int> at_a, at_b;
                for (std::size_t k = 0; k < a.size(); ++k)
                    if (a[k] == term) at_a.push_back(static_cast<int>(k));
                for (std::size_t k = 0; k < b.size(); ++k)
                    if (b[k] == term) at_b.push_back(static_cast<int>(k));
                const int tt = static_cast<int>(at_a.size()), tb = static_cast<int>(at_b.size());
                if (tt + tb > 0)
                    out.push_back(Posting{static_cast<long long>(i), 0, n.updated_us, tt, tb,
                                          static_cast<int>(n.title.length),
                                          static_cast<int>(n.body.length),
                                          with_positions ? encode_positions(at_a, at_b) : ""});
            }
            return out;
        };
        // mode % 3 == 0: complete lists; 1: lists of unknown extent; 2: as 1, then the open
        // terms' counts. Modes 3-5: the same with positions in the postings.
        for (int mode = 0; mode < 6; ++mode) {
            const bool with_positions = mode >= 3;
            std::vector<std::vector<Posting>> post(plan.size());
            std::vector<bool> complete(plan.size(), mode % 3 == 0);
            for (std::size_t u = 0; u < plan.size(); ++u)
                post[u] = postings_of(plan[u].term, with_positions);
            std::vector<Candidate> cands = r.bound_candidates(plan, post, complete, 1000);
            if (mode % 3 == 2) {
                for (const Ranker::OpenTerm& o : r.open_terms(cands))
                    r.add_counts(cands, o.term, postings_of(o.term, with_positions), true);
                BOOST_CHECK(r.open_terms(cands).empty());
            }
            for (const Candidate& cand : cands) {
                const auto& n = c.notes[static_cast<std::size_t>(cand.uid_hi)];
                const std::optional<double> full = r.score(n.title.terms, n.body.terms);
                const Estimate e = r.estimate(cand);
                // every count and position known: phrases and proximity need no stored terms
                if (mode == 5) BOOST_CHECK(e.exact);
                if (e.exact) {
                    ++exact;
                    exact_from_positions += with_positions && full && text != std::string("alpha");
                    BOOST_CHECK_EQUAL(e.matched, full.has_value());
                    if (full) BOOST_CHECK(e.score == *full);  // bit for bit
                } else {
                    ++bounded;
                    if (full) BOOST_CHECK_GE(e.score, *full);
                }
            }
        }
    }
    BOOST_CHECK_GT(exact, 50);    // both cases really happen
    BOOST_CHECK_GT(bounded, 50);
    BOOST_CHECK_GT(exact_from_positions, 50);
}

// A prefix clause is worth its best alternative: a known match worth more than any unknown
// alternative could be settles it (exact, bit for bit); otherwise the estimate stays a bound.
BOOST_AUTO_TEST_CASE(prefix_clause_is_exact_when_a_known_match_dominates) {
    // n0 holds `found`, the other 39 notes `frequent`
    auto check = [](const std::string& found, const std::string& frequent, bool want_exact) {
        Corpus c;
        c.add("n0", "", found + " alpha", 1);
        for (int i = 1; i < 40; ++i) c.add("n" + std::to_string(i), "", frequent + " beta gamma", 1 + i);
        const ParsedQuery q = parse_query("kube");
        Ranker r(q, c.stats(q));
        const std::vector<RetrievalUnit> plan = r.retrieval_plan(1000000);
        BOOST_REQUIRE_EQUAL(plan.size(), 2u);  // "kube" and "kubernetes"
        // only n0's posting of `found` was read, and the lists may be cut; the plan is rarest
        // first, and `found` is the rare one (in n0 alone) exactly in the case meant exact
        std::vector<std::vector<Posting>> post(2);
        post[want_exact ? 0 : 1] = {Posting{0, 0, 1, 0, 1, 0, 2, {}}};
        const auto cands = r.bound_candidates(plan, post, {false, false}, 10);
        BOOST_REQUIRE_EQUAL(cands.size(), 1u);
        const Estimate e = r.estimate(cands[0]);
        const std::optional<double> full = r.score(c.notes[0].title.terms, c.notes[0].body.terms);
        BOOST_REQUIRE(full);
        BOOST_CHECK_EQUAL(e.exact, want_exact);
        if (e.exact) BOOST_CHECK(e.score == *full);  // bit for bit
        else BOOST_CHECK_GE(e.score, *full);
        // open_terms names what is still needed: nothing once the clause is settled, else the
        // unknown alternative, needed by the one candidate
        const std::vector<Ranker::OpenTerm> open = r.open_terms(cands);
        if (want_exact) {
            BOOST_CHECK(open.empty());
        } else {
            BOOST_REQUIRE_EQUAL(open.size(), 1u);
            BOOST_CHECK_EQUAL(open[0].term, plan[0].term);  // the list that was not read
            BOOST_CHECK_EQUAL(open[0].candidates, 1u);
        }
    };
    // the rare exact stem was found: the frequent expansion (half weight, low idf) cannot
    // outweigh it even if the whole note were that word
    check("kube", "kubernetes", true);
    // the frequent expansion was found: the exact stem, in n0 or not, might outweigh it
    check("kubernetes", "kube", false);
}

BOOST_AUTO_TEST_CASE(canonical_form_ignores_spelling_noise) {
    BOOST_CHECK_EQUAL(parse_query("Café,  KUBER").canonical(), parse_query("cafe kuber").canonical());
    BOOST_CHECK_NE(parse_query("\"a b\"").canonical(), parse_query("a b").canonical());
}

BOOST_AUTO_TEST_CASE(long_queries_are_capped) {
    std::string q;
    for (int i = 0; i < 200; ++i) q += "w" + std::to_string(i) + " ";
    const ParsedQuery p = parse_query(q);
    std::size_t main = 0;
    for (const auto& c : p.clauses) main += c.kind != ClauseKind::Proximity;
    BOOST_CHECK_EQUAL(main, kMaxQueryClauses);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(positions)

BOOST_AUTO_TEST_CASE(positions_round_trip_and_reject_what_does_not_fit) {
    BOOST_CHECK_EQUAL(encode_positions({2}, {0, 5, 9}), "2;0,5,4");
    BOOST_CHECK_EQUAL(encode_positions({}, {7}), ";7");
    std::vector<int> t, b;
    BOOST_REQUIRE(decode_positions("2;0,5,4", 1, 3, t, b));
    BOOST_CHECK(t == std::vector<int>({2}));
    BOOST_CHECK(b == std::vector<int>({0, 5, 9}));
    BOOST_REQUIRE(decode_positions(";7", 0, 1, t, b));
    BOOST_CHECK(t.empty());
    BOOST_CHECK(b == std::vector<int>({7}));
    // unknown, malformed, or not the counts the row says: the stored terms decide instead
    for (const char* bad : {"", "2", "2;0,5", "2;0,5,4,1", "x;1", "2;0,,4", "2;0,0", "2;0,5,4;",
                            "1,2;", "2;99999999999"})
        BOOST_CHECK_MESSAGE(!decode_positions(bad, 1, 3, t, b), bad);
    std::vector<int> many(kMaxStoredPositions + 1);
    for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int>(i * 2);
    BOOST_CHECK_EQUAL(encode_positions({}, many), "");
    many.pop_back();
    BOOST_REQUIRE(decode_positions(encode_positions({}, many), 0, static_cast<int>(many.size()), t, b));
    BOOST_CHECK(b == many);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(snippets)

bool same_spans(const std::vector<WordSpan>& a, const std::vector<WordSpan>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].index != b[i].index || a[i].begin != b[i].begin || a[i].end != b[i].end) return false;
    return true;
}

// lead_words (64 bytes at a time) finds exactly the words the word-by-word reference finds, on
// random texts of runs of spaces, punctuation, ASCII runs, non-ASCII letters and CJK, with words
// across block boundaries and word limits that cut the text anywhere.
BOOST_AUTO_TEST_CASE(lead_words_equals_the_word_by_word_scan) {
    TermLeads leads;
    for (const char* t : {"ab", "x", "zz", "7q", "k\xC3\xA9"}) leads.add(t);
    const std::vector<std::string> pieces = {" ", "  ", "ab", "AB", "aB", "x", "Xy", "zz9", "za", "-", "(",
                                             "),", "7Q", "q7", "caf\xC3\xA9", "\xE6\x9D\xB1\xE4\xBA\xAC", "kz",
                                             std::string(70, 'm'), std::string(63, 'y') + "ab", "o"};
    std::mt19937 rng(7);
    int found = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        const int n = static_cast<int>(rng() % 120);
        for (int i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
        for (std::size_t max_words : {std::size_t{4000}, std::size_t{0}, std::size_t{1},
                                      static_cast<std::size_t>(rng() % 40)}) {
            std::vector<WordSpan> fast, simple;
            lead_words(text, leads, max_words, fast);
            lead_words_simple(text, leads, max_words, simple);
            BOOST_REQUIRE_MESSAGE(same_spans(fast, simple), "text '" << text << "' max_words " << max_words);
            found += static_cast<int>(simple.size());
            for (const WordSpan& w : simple) {
                for (std::size_t back = 0; back < 5; ++back) {
                    // the reference: every word of the text, in order
                    std::vector<WordSpan> all;
                    for (std::size_t i = 0; i < text.size();) {
                        if (text[i] == ' ') {
                            ++i;
                            continue;
                        }
                        const std::size_t j = std::min(text.find(' ', i), text.size());
                        all.push_back(WordSpan{all.size(), i, j});
                        i = j;
                    }
                    const WordSpan want = all[w.index - std::min(back, w.index)];
                    const WordSpan got = word_before(text, w.index, w.begin, back);
                    BOOST_REQUIRE(got.index == want.index && got.begin == want.begin && got.end == want.end);
                }
                break;  // one word per text is enough for word_before
            }
        }
    }
    BOOST_CHECK_GT(found, 10000);  // the texts do hold words to find
}

// The passage around the window of 24 words with the most distinct query terms (then the most
// matches, then the earliest), a few words of context before it, ellipsis when cut.
BOOST_AUTO_TEST_CASE(snippet_picks_the_densest_window) {
    std::string filler;
    for (int i = 0; i < 40; ++i) filler += "lorem ";
    const std::string text = "alpha at the start " + filler + "then beta and gamma and alpha together " +
                             filler + "gamma gamma gamma alone";
    const std::string s = query_snippet(text, parse_query("alpha beta gamma"));
    BOOST_CHECK_EQUAL(s.rfind("\xE2\x80\xA6lorem lorem then beta and gamma and alpha together", 0), 0u);
    // one distinct term everywhere: the earliest window with the most matches
    const std::string g = query_snippet(text, parse_query("gamma"));
    BOOST_CHECK_EQUAL(g.rfind("\xE2\x80\xA6lorem lorem lorem gamma gamma gamma alone", 0), 0u);
    // the last query word counts as a prefix
    BOOST_CHECK_EQUAL(query_snippet("nothing here but together", parse_query("toge")).find("together") !=
                          std::string::npos, true);
    BOOST_CHECK_EQUAL(query_snippet(text, parse_query("zzz")), "");
    BOOST_CHECK_EQUAL(query_snippet("alpha first", parse_query("alpha")), "alpha first");
}

// A stopword weighs little in the ranking, and in the snippet a window with a real query word
// beats one with more stopwords; a query of stopwords alone still finds them; quoted, they count.
BOOST_AUTO_TEST_CASE(snippet_prefers_query_words_to_stopwords) {
    std::string filler;
    for (int i = 0; i < 40; ++i) filler += "lorem ";
    const std::string text = filler + "the cat and the dog and the end " + filler + "we are meeting today " + filler;
    BOOST_CHECK(query_snippet(text, parse_query("the meet")).find("meeting today") != std::string::npos);
    BOOST_CHECK(query_snippet(text, parse_query("the and")).find("the cat and the dog") != std::string::npos);
    BOOST_CHECK(query_snippet(text, parse_query("\"the cat\" meeting")).find("the cat") != std::string::npos);
}

// Words are only analysed when one of their alphanumeric runs starts like a query term: every
// shape analysis can match must still be found (case, stems, runs inside punctuation, digits,
// one-letter terms, prefixes, folded non-ASCII words).
BOOST_AUTO_TEST_CASE(snippet_finds_every_word_shape_analysis_matches) {
    std::string filler;
    for (int i = 0; i < 40; ++i) filler += "lorem ";
    const auto found = [&](const std::string& word, const std::string& q) {
        const std::string s = query_snippet(filler + word + " " + filler, parse_query(q));
        return s.find(word) != std::string::npos;
    };
    BOOST_CHECK(found("foo-bar", "bar"));
    BOOST_CHECK(found("foo-bar", "foo"));
    BOOST_CHECK(found("RUNNING", "runs"));
    BOOST_CHECK(found("(Kubernetes),", "kube"));
    BOOST_CHECK(found("v2/x", "x"));
    BOOST_CHECK(found("[2026]", "2026"));
    BOOST_CHECK(found("Café", "cafe"));
    BOOST_CHECK(found("ＡＢＣ", "abc"));
    BOOST_CHECK(found("cries", "cry"));
    BOOST_CHECK(!found("barn", "bar baz"));
    BOOST_CHECK(!found("ab-cd", "ac"));
}

BOOST_AUTO_TEST_SUITE_END()
