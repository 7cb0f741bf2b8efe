// The stored form of a note's plain text (store/plain_text_codec.hpp): edits of the content that
// give back the plain text byte for byte, for real markdown (the til corpus through
// derive_note), for random texts with random edits (multi-byte characters, runs cut inside
// them), for texts that look like edits, and a clear error for edits that do not fit.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "base/util.hpp"
#include "ingest/markdown.hpp"
#include "store/plain_text_codec.hpp"

namespace fs = std::filesystem;
using notesd::detail::decode_plain_text;
using notesd::detail::encode_plain_text;

namespace {

std::string shared_dir() {
    if (const char* s = std::getenv("NOTESD_SHARED")) return s;
    const std::string src =
        fs::path(__FILE__).parent_path().parent_path().parent_path().parent_path().string();
    return (src.empty() ? "." : src) + "/../shared";
}

// Checks the stored form of plain against content: it decodes back, it is valid UTF-8 without
// NUL (a TEXT value on every backend), and it is never longer than the plain text's own
// (a few bytes more only for one starting with the edits' newline).
void check_round_trip(const std::string& content, const std::string& plain) {
    const std::string stored = encode_plain_text(content, plain);
    BOOST_REQUIRE_EQUAL(decode_plain_text(content, stored), plain);
    BOOST_REQUIRE(notesd::valid_utf8(stored));
    BOOST_REQUIRE(stored.find('\0') == std::string::npos || plain.find('\0') != std::string::npos);
    if (plain.empty() || plain[0] != '\n') BOOST_REQUIRE_LE(stored.size(), plain.size());
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(plain_text_codec)

BOOST_AUTO_TEST_CASE(real_markdown_round_trips_in_a_fraction_of_its_size) {
    const std::string til = shared_dir() + "/corpus/til";
    BOOST_REQUIRE_MESSAGE(fs::is_directory(til), "corpus missing: " + til + " (set NOTESD_SHARED)");
    std::size_t notes = 0, plain_bytes = 0, stored_bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(til)) {
        if (!e.is_regular_file() || e.path().extension() != ".md") continue;
        const std::string content = read_file(e.path());
        if (!notesd::valid_utf8(content)) continue;
        const notesd::DerivedNote d = notesd::derive_note(content, std::nullopt);
        check_round_trip(content, d.plain_text);
        ++notes;
        plain_bytes += d.plain_text.size();
        stored_bytes += encode_plain_text(content, d.plain_text).size();
    }
    BOOST_TEST_MESSAGE(notes << " notes: plain text " << plain_bytes << " bytes, stored " << stored_bytes);
    BOOST_REQUIRE_GT(notes, 1000u);
    // Short notes dense with code, links and tables: the edits save about three fifths.
    BOOST_CHECK_LT(stored_bytes * 2, plain_bytes);
}

BOOST_AUTO_TEST_CASE(random_edits_of_random_texts_round_trip) {
    std::mt19937 rng(20261128);
    const std::string alphabet[] = {"a", "b", " ", "\n", "#", "*", "é", "中", "😀", "[", "x"};
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    for (int round = 0; round < 3000; ++round) {
        std::string content;
        const std::size_t chars = pick(400);
        for (std::size_t i = 0; i < chars; ++i) content += alphabet[pick(std::size(alphabet))];
        // The plain text: runs of the content (whole characters, in order), some left out,
        // with inserted characters between them.
        std::string plain;
        std::size_t at = 0;
        while (at < content.size()) {
            std::size_t end = std::min(content.size(), at + pick(40));
            while (end < content.size() && (static_cast<unsigned char>(content[end]) & 0xC0) == 0x80) ++end;
            if (pick(3) != 0) plain.append(content, at, end - at);
            if (pick(4) == 0) plain += alphabet[pick(std::size(alphabet))];
            at = end;
        }
        if (pick(10) == 0) plain = content;
        if (pick(10) == 0) plain = "\n" + plain;  // looks like edits
        check_round_trip(content, plain);
        check_round_trip("", plain);  // nothing to copy from
    }
}

BOOST_AUTO_TEST_CASE(rows_stored_before_are_their_own_plain_text) {
    BOOST_CHECK_EQUAL(decode_plain_text("# T\n\nbody", "body"), "body");
    BOOST_CHECK_EQUAL(decode_plain_text("anything", ""), "");
    BOOST_CHECK_EQUAL(encode_plain_text("anything", ""), "");
    // A plain text the edits would not shorten is stored as it is.
    BOOST_CHECK_EQUAL(encode_plain_text("zzzz", "ab"), "ab");
}

BOOST_AUTO_TEST_CASE(the_edits_of_a_note) {
    const std::string content = "# Title of it\n\nFirst paragraph here.\n\n- [ ] a task to do\n";
    const std::string plain = "First paragraph here. a task to do";
    const std::string stored = encode_plain_text(content, plain);
    BOOST_CHECK_EQUAL(stored, "\ns15c21_s7c12");
    BOOST_CHECK_EQUAL(decode_plain_text(content, stored), plain);
}

BOOST_AUTO_TEST_CASE(edits_that_do_not_fit_the_content_are_an_error) {
    for (const char* bad : {"\nc9", "\ns10", "\nx1", "\nc", "\ni5:ab", "\ni2ab", "\nc99999999999999999999"})
        BOOST_CHECK_THROW(decode_plain_text("12345678", bad), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_text_the_content_does_not_hold_stays_as_it_is) {
    // 200,000 characters of entities decode to a text of other bytes: the look-ups stop at
    // their budget and the text is stored whole.
    std::string content, plain;
    for (int i = 0; i < 40000; ++i) content += "&lt; ";
    for (int i = 0; i < 40000; ++i) plain += "< ";
    plain.pop_back();
    check_round_trip(content, plain);
}

BOOST_AUTO_TEST_SUITE_END()
