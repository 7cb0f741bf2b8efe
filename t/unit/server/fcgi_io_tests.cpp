#include <boost/test/unit_test.hpp>

#include <string>

#include "server/fcgi_io.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(fcgi_io)

BOOST_AUTO_TEST_CASE(content_length_is_strict) {
    BOOST_TEST(*parse_content_length("") == 0u);
    BOOST_TEST(*parse_content_length("0") == 0u);
    BOOST_TEST(*parse_content_length("65536") == 65536u);
    for (const char* bad : {" 1", "1 ", "+1", "-1", "1x", "0x10", "1e3", "1234567890123456789"})
        BOOST_TEST(!parse_content_length(bad), "accepted '" << bad << "'");
}

BOOST_AUTO_TEST_CASE(cgi_response_has_status_line_headers_and_body) {
    HttpResponse r;
    r.status = 413;
    r.headers = {{"Content-Type", "application/json"}, {"X-Evil", "a\r\nSet-Cookie: x"}};
    r.body = "{}";
    BOOST_TEST(encode_cgi_response(r) ==
               "Status: 413 Payload Too Large\r\nContent-Type: application/json\r\n"
               "X-Evil: aSet-Cookie: x\r\n\r\n{}");
    BOOST_TEST(std::string(reason_phrase(503)) == "Service Unavailable");
}

BOOST_AUTO_TEST_CASE(fastcgi_records_frame_the_payload) {
    const std::string out = encode_fastcgi_records(0x0102, "abc");
    // STDOUT(3 bytes + 5 padding), empty STDOUT, END_REQUEST(8)
    BOOST_REQUIRE_EQUAL(out.size(), 8u + 8u + 8u + 8u + 8u);
    const std::string h1("\x01\x06\x01\x02\x00\x03\x05\x00", 8);
    BOOST_TEST(out.substr(0, 8) == h1);
    BOOST_TEST(out.substr(8, 3) == "abc");
    BOOST_TEST(out.substr(16, 8) == std::string("\x01\x06\x01\x02\x00\x00\x00\x00", 8));
    BOOST_TEST(out.substr(24, 8) == std::string("\x01\x03\x01\x02\x00\x08\x00\x00", 8));
    BOOST_TEST(out.substr(32, 8) == std::string(8, '\0'));

    const std::string big(70000, 'x');  // needs two STDOUT records
    const std::string out2 = encode_fastcgi_records(1, big);
    const unsigned len1 = (static_cast<unsigned char>(out2[4]) << 8) | static_cast<unsigned char>(out2[5]);
    BOOST_TEST(len1 == 65528u);
    const std::size_t second = 8 + 65528;
    const unsigned len2 = (static_cast<unsigned char>(out2[second + 4]) << 8) |
                          static_cast<unsigned char>(out2[second + 5]);
    BOOST_TEST(len2 == 70000u - 65528u);
}

BOOST_AUTO_TEST_SUITE_END()
