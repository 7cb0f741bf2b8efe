#include <boost/test/unit_test.hpp>

#include "base/json_check.hpp"

using namespace notesd;

namespace {
// "" when the text passes, else "<problem> at byte N".
std::string check(std::string_view text, bool dups = false, std::size_t depth = 64) {
    auto e = check_json_text(text, depth, dups);
    return e ? describe(*e) : "";
}
}  // namespace

BOOST_AUTO_TEST_SUITE(json_check)

BOOST_AUTO_TEST_CASE(accepts_rfc8259_text) {
    for (const char* ok : {"{}", " {\"a\" : [1, -0, 0.5, 1e3, -2.5E-7, true, false, null, \"\"]}\r\n\t",
                           "[]", "\"s\"", "0", "{\"k\":{\"n\":[[],{}]}}",
                           "{\"s\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00\"}",
                           "{\"u\":\"\xC3\xA9\xE6\x9D\xB1\xF0\x9F\x98\x80\"}", "{\"z\":\"\\u0000\"}",
                           "{\"big\":18446744073709551616}"})
        BOOST_CHECK_MESSAGE(check(ok) == "", ok);
}

BOOST_AUTO_TEST_CASE(nul_bytes) {
    using namespace std::string_literals;
    BOOST_CHECK_EQUAL(check("{\"a\":1}\0{\"b\":2}"s), "trailing a NUL byte after the JSON value at byte 7");
    BOOST_CHECK_EQUAL(check("{\"a\":\"x\0y\"}"s), "a NUL byte in a string at byte 7");
    BOOST_CHECK_EQUAL(check("{\0\"a\":1}"s), "expected a member name in double quotes but found a NUL byte at byte 1");
    BOOST_CHECK_EQUAL(check("\0"s), "expected a value but found a NUL byte at byte 0");
}

BOOST_AUTO_TEST_CASE(raw_control_characters_in_strings) {
    BOOST_CHECK_EQUAL(check("{\"a\":\"line\nbreak\"}"), "a raw control character U+000A in a string (escape it) at byte 10");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\t\"}"), "a raw control character U+0009 in a string (escape it) at byte 6");
    BOOST_CHECK_EQUAL(check("{\"\x1f\":1}"), "a raw control character U+001F in a string (escape it) at byte 2");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\x7f\"}"), "");  // DEL is not a control character to JSON
}

BOOST_AUTO_TEST_CASE(trailing_bytes) {
    BOOST_CHECK_EQUAL(check("{} {}"), "trailing '{' after the JSON value at byte 3");
    BOOST_CHECK_EQUAL(check("{\"a\":1}x"), "trailing 'x' after the JSON value at byte 7");
    BOOST_CHECK_EQUAL(check("{}\x0b"), "trailing byte 0x0B after the JSON value at byte 2");
    BOOST_CHECK_EQUAL(check("{}  \n"), "");
}

BOOST_AUTO_TEST_CASE(invalid_utf8) {
    BOOST_CHECK_EQUAL(check("{\"a\":\"\xff\"}"), "invalid UTF-8 (byte 0xFF) at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\xc0\xaf\"}"), "invalid UTF-8 (byte 0xC0) at byte 6");  // overlong '/'
    BOOST_CHECK_EQUAL(check("{\"a\":\"\xed\xa0\x80\"}"),
                      "invalid UTF-8 (an overlong form, a surrogate or a code point past U+10FFFF) at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\xe6\x9d\"}"), "invalid UTF-8 (byte 0x22 in a sequence) at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\xe6\x9d"), "invalid UTF-8 (a truncated sequence) at byte 6");
    BOOST_CHECK_EQUAL(check("{\xc3\xa9:1}"), "expected a member name in double quotes but found byte 0xC3 at byte 1");
}

BOOST_AUTO_TEST_CASE(escapes) {
    BOOST_CHECK_EQUAL(check("{\"a\":\"\\udc00\"}"), "an escaped lone surrogate U+DC00 at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\\ud800x\"}"), "an escaped lone surrogate U+D800 at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\\ud800\\u0041\"}"), "an escaped lone surrogate U+D800 at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\\x41\"}"), "an invalid escape \\'x' at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\\u12g4\"}"), "an invalid \\u escape (four hex digits expected) at byte 6");
    BOOST_CHECK_EQUAL(check("{\"a\":\"\\"), "unexpected end of the body inside a string at byte 6");
}

BOOST_AUTO_TEST_CASE(numbers_and_literals) {
    for (const char* bad : {"[01]", "[1.]", "[.5]", "[-]", "[+1]", "[1e]", "[1e+]", "[NaN]", "[Infinity]",
                            "[-Infinity]", "[0x10]", "[tru]", "[nul]", "[True]", "[1 2]"})
        BOOST_CHECK_MESSAGE(check(bad) != "", bad);
    BOOST_CHECK_EQUAL(check("[01]"), "a number with a leading zero at byte 1");
    BOOST_CHECK_EQUAL(check("[1.]"), "a digit expected after the decimal point at byte 3");
}

BOOST_AUTO_TEST_CASE(structure) {
    BOOST_CHECK_EQUAL(check(""), "unexpected end of the body where a value was expected at byte 0");
    BOOST_CHECK_EQUAL(check("{\"a\":1,}"), "expected a member name in double quotes but found '}' at byte 7");
    BOOST_CHECK_EQUAL(check("[1,]"), "expected a value but found ']' at byte 3");
    BOOST_CHECK_EQUAL(check("{\"a\" 1}"), "expected ':' but found '1' at byte 5");
    BOOST_CHECK_EQUAL(check("{\"a\":1"), "unexpected end of the body inside an object at byte 6");
    BOOST_CHECK_EQUAL(check("[1}"), "expected ',' or ']' but found '}' at byte 2");
    BOOST_CHECK_EQUAL(check("{/*c*/}"), "expected a member name in double quotes but found '/' at byte 1");
    BOOST_CHECK_EQUAL(check("{'a':1}"), "expected a member name in double quotes but found ''' at byte 1");
}

BOOST_AUTO_TEST_CASE(depth_limit) {
    const std::string ok = std::string(64, '[') + std::string(64, ']');
    BOOST_CHECK_EQUAL(check(ok), "");
    const std::string deep = std::string(65, '[') + std::string(65, ']');
    BOOST_CHECK_EQUAL(check(deep), "arrays and objects nested deeper than 64 levels at byte 64");
    const std::string huge(1000000, '[');  // no recursion: a million levels cost nothing
    BOOST_CHECK(check(huge, false, 1000000) != "");
}

BOOST_AUTO_TEST_CASE(duplicate_keys_only_when_asked) {
    BOOST_CHECK_EQUAL(check("{\"a\":1,\"a\":2}"), "");
    BOOST_CHECK_EQUAL(check("{\"a\":1,\"a\":2}", true), "duplicate key \"a\" at byte 7");
    // Compared after unescaping; the same name in different objects is fine.
    BOOST_CHECK_EQUAL(check("{\"o\":{\"k\":1},\"p\":{\"k\":1,\"\\u006b\":2}}", true), "duplicate key \"k\" at byte 24");
    BOOST_CHECK_EQUAL(check("{\"o\":{\"k\":1},\"k\":[{\"k\":1}],\"K\":0}", true), "");
    // An object's keys are still known after a nested object closed.
    BOOST_CHECK_EQUAL(check("{\"a\":{\"a\":1},\"b\":2,\"a\":3}", true), "duplicate key \"a\" at byte 19");
    // Thousands of keys (a 64 KiB body holds about 6,500): the last one repeats the first.
    std::string many = "{";
    for (int i = 0; i < 6500; ++i) many += "\"k" + std::to_string(i) + "\":0,";
    const std::size_t last = many.size();
    many += "\"k0\":0}";
    BOOST_CHECK_EQUAL(check(many, true), "duplicate key \"k0\" at byte " + std::to_string(last));
}

BOOST_AUTO_TEST_SUITE_END()
