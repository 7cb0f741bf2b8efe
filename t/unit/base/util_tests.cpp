#include <ctime>
#include <cstdio>
#include <boost/test/unit_test.hpp>

#include "base/util.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(util)

BOOST_AUTO_TEST_CASE(uuid_v4_is_canonical_and_random) {
    std::string a = new_uuid(), b = new_uuid();
    BOOST_CHECK_NE(a, b);
    BOOST_REQUIRE(parse_uuid(a));
    BOOST_CHECK_EQUAL(*parse_uuid(a), a);
    BOOST_CHECK_EQUAL(a[14], '4');
}

BOOST_AUTO_TEST_CASE(stable_uuid_is_deterministic_version_5) {
    BOOST_CHECK_EQUAL(stable_uuid("user:1/note:a.md"), stable_uuid("user:1/note:a.md"));
    BOOST_CHECK_NE(stable_uuid("user:1/note:a.md"), stable_uuid("user:2/note:a.md"));
    BOOST_CHECK_EQUAL(stable_uuid("x")[14], '5');
}

BOOST_AUTO_TEST_CASE(parse_uuid_accepts_any_case_rejects_others) {
    BOOST_CHECK_EQUAL(*parse_uuid("3F0C1C2E-8A51-4C8E-9A43-2F1D7A6B9C01"),
                      "3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
    BOOST_CHECK(!parse_uuid("3f0c1c2e8a514c8e9a432f1d7a6b9c01"));
    BOOST_CHECK(!parse_uuid("3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c0g"));
    BOOST_CHECK(!parse_uuid("{3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01}"));
    BOOST_CHECK(!parse_uuid(""));
}

BOOST_AUTO_TEST_CASE(request_id_formats_nginx_id) {
    BOOST_CHECK_EQUAL(request_id_from("3F0C1C2E8A514C8E9A432F1D7A6B9C01"),
                      "api-request-3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
    std::string r = request_id_from("");
    BOOST_CHECK_EQUAL(r.rfind("api-request-", 0), 0u);
    BOOST_CHECK(parse_uuid(r.substr(12)));
}

BOOST_AUTO_TEST_CASE(format_time_fraction_rules) {
    BOOST_CHECK_EQUAL(format_time(0), "1970-01-01T00:00:00Z");
    BOOST_CHECK_EQUAL(format_time(1746368411000000LL), "2025-05-04T14:20:11Z");
    BOOST_CHECK_EQUAL(format_time(1746368411120000LL), "2025-05-04T14:20:11.120Z");
    BOOST_CHECK_EQUAL(format_time(1746368411000001LL), "2025-05-04T14:20:11.000001Z");
    BOOST_CHECK_EQUAL(format_time(-1), "1969-12-31T23:59:59.999999Z");
}

// format_time writes years 0-9999 digit by digit and others through snprintf: both agree with
// an independent formatting (gmtime_r) over a spread of instants, and parse_time reads them back.
BOOST_AUTO_TEST_CASE(format_time_matches_gmtime_and_round_trips) {
    const long long fracs[] = {0, 1, 999, 1000, 120000, 500000, 999000, 999999};
    for (long long secs = -62135596800LL; secs < 253402300800LL; secs += 7919LL * 86400 + 3671) {
        for (long long f : fracs) {
            const long long us = secs * 1000000 + f;
            const time_t t = static_cast<time_t>(secs);
            std::tm tm{};
            BOOST_REQUIRE(gmtime_r(&t, &tm));
            char want[64];
            int n = std::snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
            if (f % 1000 == 0 && f != 0) n += std::snprintf(want + n, sizeof want - n, ".%03lld", f / 1000);
            else if (f != 0) n += std::snprintf(want + n, sizeof want - n, ".%06lld", f);
            std::snprintf(want + n, sizeof want - n, "Z");
            BOOST_REQUIRE_EQUAL(format_time(us), want);
            BOOST_REQUIRE_EQUAL(parse_time(format_time(us)).value_or(-1), us);
        }
    }
    BOOST_CHECK_EQUAL(format_time(253402300799999999LL), "9999-12-31T23:59:59.999999Z");
    BOOST_CHECK_EQUAL(format_time(253402300800000000LL), "10000-01-01T00:00:00Z");  // snprintf's path
}

BOOST_AUTO_TEST_CASE(uuid_bytes_round_trip_and_reject) {
    std::string b;
    BOOST_REQUIRE(append_uuid_bytes(b, "0123ABCD-4567-89ef-0A1b-FFFFFFFFFFFF"));
    BOOST_REQUIRE_EQUAL(b.size(), 16u);
    BOOST_CHECK_EQUAL(static_cast<unsigned char>(b[0]), 0x01);
    BOOST_CHECK_EQUAL(static_cast<unsigned char>(b[15]), 0xff);
    BOOST_CHECK_EQUAL(uuid_from_bytes(b), "0123abcd-4567-89ef-0a1b-ffffffffffff");
    const std::string u = new_uuid();
    std::string c;
    BOOST_REQUIRE(append_uuid_bytes(c, u));
    BOOST_CHECK_EQUAL(uuid_from_bytes(c), u);
    for (const char* bad : {"", "0123abcd-4567-89ef-0a1b-fffffffffff", "0123abcd_4567-89ef-0a1b-ffffffffffff",
                            "0123abcg-4567-89ef-0a1b-ffffffffffff"}) {
        std::string out = "x";
        BOOST_CHECK(!append_uuid_bytes(out, bad));
        BOOST_CHECK_EQUAL(out, "x");  // unchanged
    }
}

BOOST_AUTO_TEST_CASE(uuid_halves_round_trip_in_text_order) {
    long long hi = 0, lo = 0;
    uuid_halves("00000000-0000-0000-0000-000000000000", hi, lo);
    BOOST_CHECK_EQUAL(hi, INT64_MIN);
    BOOST_CHECK_EQUAL(lo, INT64_MIN);
    BOOST_CHECK_EQUAL(uuid_from_halves(hi, lo), "00000000-0000-0000-0000-000000000000");
    uuid_halves("0123abcd-4567-89ef-fedc-ba9876543210", hi, lo);
    BOOST_CHECK_EQUAL(uuid_from_halves(hi, lo), "0123abcd-4567-89ef-fedc-ba9876543210");
    std::string prev;
    long long prev_hi = 0, prev_lo = 0;
    for (int i = 0; i < 200; ++i) {
        const std::string u = new_uuid();
        uuid_halves(u, hi, lo);
        BOOST_CHECK_EQUAL(uuid_from_halves(hi, lo), u);
        if (i > 0)  // signed order of (hi, lo) is the text order
            BOOST_CHECK_EQUAL(u < prev, hi != prev_hi ? hi < prev_hi : lo < prev_lo);
        prev = u, prev_hi = hi, prev_lo = lo;
    }
}

BOOST_AUTO_TEST_CASE(parse_time_offsets_and_fractions) {
    BOOST_CHECK_EQUAL(*parse_time("2025-05-04T14:20:11Z"), 1746368411000000LL);
    BOOST_CHECK_EQUAL(*parse_time("2025-05-04t14:20:11z"), 1746368411000000LL);
    BOOST_CHECK_EQUAL(*parse_time("2025-05-04T16:20:11+02:00"), 1746368411000000LL);
    BOOST_CHECK_EQUAL(*parse_time("2025-05-04T16:20:11 02:00"), 1746368411000000LL);
    BOOST_CHECK_EQUAL(*parse_time("2025-05-04T13:20:11.5-01:00"), 1746368411500000LL);
    BOOST_CHECK_EQUAL(*parse_time("2025-05-04T14:20:11.123456Z"), 1746368411123456LL);
    BOOST_CHECK_EQUAL(*parse_time("2024-02-29T00:00:00Z"), 1709164800000000LL);
}

BOOST_AUTO_TEST_CASE(parse_time_rejects_invalid) {
    for (const char* bad : {"2025-05-04", "2025-05-04T14:20:11", "2025-05-04T14:20:11.1234567Z",
                            "2025-02-29T00:00:00Z", "2025-13-01T00:00:00Z", "2025-04-31T00:00:00Z",
                            "2025-05-04T24:00:00Z", "2025-05-04T14:60:00Z", "2025-05-04T14:20:11+2:00",
                            "2025-05-04T14:20:11+24:00", "2025-05-04T14:20:11.Z", "x", "",
                            "2025-05-04T14:20:11Zjunk", "2025-05-04 14:20:11Z"})
        BOOST_CHECK_MESSAGE(!parse_time(bad), bad);
}

BOOST_AUTO_TEST_CASE(time_round_trip) {
    for (long long us : {0LL, 1LL, 999999LL, 1746368411123456LL, -86400000000LL, 253402300799999999LL})
        BOOST_CHECK_EQUAL(*parse_time(format_time(us)), us);
}

BOOST_AUTO_TEST_CASE(base64_round_trip_and_alphabets) {
    for (std::string s : {std::string(""), std::string("a"), std::string("ab"), std::string("abc"),
                          std::string("\xff\xfe\xfd\x00\x01", 5)}) {
        std::string e = base64url_encode(s);
        BOOST_CHECK(e.find_first_of("+/=") == std::string::npos);
        BOOST_CHECK(*base64_decode_any(e) == s);
    }
    BOOST_CHECK_EQUAL(*base64_decode_any("-_8="), *base64_decode_any("+/8"));
    BOOST_CHECK(!base64_decode_any("a!b"));
    BOOST_CHECK(!base64_decode_any("a"));
    BOOST_CHECK(!base64_decode_any("QR"));  // non-zero trailing bits
}

BOOST_AUTO_TEST_CASE(hashes_are_known_answers) {
    BOOST_CHECK_EQUAL(sha256_hex("abc"),
                      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    std::string mac = hmac_sha256("key", "The quick brown fox jumps over the lazy dog");
    BOOST_CHECK_EQUAL(base64url_encode(mac), "97yD9DBThCSxMpjmqm-xQ-9NWaFJRhdZl0edvC0aPNg");
    BOOST_CHECK(secure_equals("abc", "abc"));
    BOOST_CHECK(!secure_equals("abc", "abd"));
    BOOST_CHECK(!secure_equals("abc", "ab"));
}

BOOST_AUTO_TEST_CASE(utf8_validation) {
    BOOST_CHECK(valid_utf8("caf\xC3\xA9 \xE6\x9D\xB1 \xF0\x9F\x98\x80"));
    BOOST_CHECK(!valid_utf8("\xC0\xAF"));          // overlong
    BOOST_CHECK(!valid_utf8("\xED\xA0\x80"));      // surrogate
    BOOST_CHECK(!valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
    BOOST_CHECK(!valid_utf8("\xE6\x9D"));          // truncated
    // a bad or good sequence at every offset of ASCII (checked eight bytes at a time)
    for (std::size_t at = 0; at < 24; ++at)
        for (std::size_t len = at; len < at + 12; ++len) {
            std::string ascii(len, 'a');
            BOOST_CHECK(!valid_utf8(ascii.substr(0, at) + "\xC0\xAF" + ascii.substr(at)));
            BOOST_CHECK(!valid_utf8(ascii.substr(0, at) + "\xE6\x9D"));
            BOOST_CHECK(!valid_utf8(ascii.substr(0, at) + "\x80" + ascii.substr(at)));
            BOOST_CHECK(valid_utf8(ascii.substr(0, at) + "\xC3\xA9" + ascii.substr(at)));
            BOOST_CHECK(valid_utf8(ascii));
        }
    BOOST_CHECK_EQUAL(utf8_length("caf\xC3\xA9\xF0\x9F\x98\x80"), 5u);
}

BOOST_AUTO_TEST_CASE(find_space_matches_a_byte_loop) {
    // every position of strings of every length up to 40 with spaces (and bytes whose
    // subtraction borrows: 0x00, 0x21, 0x80, 0xFF) at pseudo-random places
    const char alphabet[] = {'a', ' ', '\x00', '\x21', '\x80', '\xFF', '\x1F', 'z'};
    unsigned state = 12345;
    for (int round = 0; round < 2000; ++round) {
        std::string s;
        const int len = round % 41;
        for (int i = 0; i < len; ++i) {
            state = state * 1103515245u + 12345u;
            s.push_back(alphabet[(state >> 16) % 8]);
        }
        const char* end = s.data() + s.size();
        for (std::size_t from = 0; from <= s.size(); ++from) {
            const char* want = s.data() + from;
            while (want < end && *want != ' ') ++want;
            BOOST_REQUIRE_EQUAL(find_space(s.data() + from, end) - s.data(), want - s.data());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
