#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/phase_clock.hpp"
#include "server/config_check.hpp"
#include "server/fcgi_records.hpp"
#include "server/scoreboard.hpp"
#include "server/status.hpp"
#include "server/status_server.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(status)

BOOST_AUTO_TEST_CASE(request_reader_takes_a_request_in_pieces) {
    const std::string req = encode_fastcgi_request(
        7, {{"QUERY_STRING", "format=prometheus"}, {"LONG", std::string(300, 'x')}});
    FcgiRequestReader r;
    for (std::size_t i = 0; i + 1 < req.size(); ++i)
        BOOST_TEST_REQUIRE((r.feed(&req[i], 1) == FcgiRequestReader::State::more));
    BOOST_TEST((r.feed(&req.back(), 1) == FcgiRequestReader::State::done));
    BOOST_TEST(r.request_id() == 7);
    BOOST_TEST(r.param("QUERY_STRING") == "format=prometheus");
    BOOST_TEST(r.param("LONG") == std::string(300, 'x'));
    BOOST_TEST(r.param("MISSING") == "");
}

BOOST_AUTO_TEST_CASE(request_reader_refuses_garbage_and_floods) {
    FcgiRequestReader a;
    const std::string junk = encode_fastcgi_records(1, "x");  // a response where a request belongs
    BOOST_TEST((a.feed(junk.data(), junk.size()) == FcgiRequestReader::State::bad));
    FcgiRequestReader b;  // params that never end, past the 64 KiB cap
    std::string req = encode_fastcgi_request(1, {});
    req.resize(16);  // begin record only
    b.feed(req.data(), req.size());
    const std::string params_head("\x01\x04\x00\x01\xff\xf8\x00\x00", 8);
    FcgiRequestReader::State st = FcgiRequestReader::State::more;
    for (int i = 0; i < 3 && st == FcgiRequestReader::State::more; ++i) {
        std::string rec = params_head + std::string(0xfff8, 'a');
        st = b.feed(rec.data(), rec.size());
    }
    BOOST_TEST((st == FcgiRequestReader::State::bad));
}

BOOST_AUTO_TEST_CASE(response_reader_collects_stdout) {
    const std::string out = encode_fastcgi_records(3, "Status: 200 OK\r\n\r\nhello");
    FcgiResponseReader r;
    BOOST_TEST((r.feed(out.data(), out.size()) == FcgiResponseReader::State::done));
    BOOST_TEST(r.stdout_text() == "Status: 200 OK\r\n\r\nhello");
}

BOOST_AUTO_TEST_CASE(latency_buckets_are_upper_bounds) {
    BOOST_TEST(latency_bucket(0) == 0);
    BOOST_TEST(latency_bucket(1000) == 0);
    BOOST_TEST(latency_bucket(1001) == 1);
    BOOST_TEST(latency_bucket(10000000) == kLatencyBuckets - 2);
    BOOST_TEST(latency_bucket(10000001) == kLatencyBuckets - 1);
}

BOOST_AUTO_TEST_CASE(seat_counts_into_shared_memory) {
    Scoreboard board = Scoreboard::create();
    const int cell = board.claim(1234);
    BOOST_TEST_REQUIRE(cell == 0);
    BOOST_TEST(board.claim(1235) == 1);
    WorkerSeat seat(&board.memory(), &board.cell(cell));
    seat.reading(100, 200);
    seat.serving("api-request-x", "GET", "/v2/notes", 300);
    BOOST_TEST(board.cell(cell).deadline_ns.load() == 300);
    const CellText t = read_cell_text(board.cell(cell));
    BOOST_TEST(t.request_id == "api-request-x");
    BOOST_TEST(t.path == "/v2/notes");
    seat.count(1, 201, 3000000, false);   // endpoint 1, 3 ms
    seat.count(-1, 404, 500000, true);    // no route, 0.5 ms, slow
    seat.idle();
    const ScoreboardMemory& m = board.memory();
    BOOST_TEST(m.endpoints[2].by_class[1].load() == 1u);
    BOOST_TEST(m.endpoints[2].buckets[latency_bucket(3000)].load() == 1u);
    BOOST_TEST(m.endpoints[0].by_class[3].load() == 1u);
    BOOST_TEST(m.slow_requests.load() == 1u);
    BOOST_TEST(board.cell(cell).served.load() == 2u);
    BOOST_TEST(board.cell(cell).started_ns.load() == 0);
    board.release(cell);
    BOOST_TEST(board.claim(99) == 0);
}

BOOST_AUTO_TEST_CASE(prometheus_text_names_and_cumulative_buckets) {
    StatusReport r;
    r.version = "1.2\"3";
    StatusReport::Endpoint e;
    e.name = "list_notes";
    e.by_class[1] = 3;
    e.buckets[0] = 2;
    e.buckets[3] = 1;
    e.duration_us_sum = 2500;
    r.endpoints.push_back(e);
    const std::string text = render_status_prometheus(r);
    BOOST_TEST(text.find("notesd_build_info{version=\"1.2\\\"3\"} 1\n") != std::string::npos);
    BOOST_TEST(text.find("notesd_requests_total{endpoint=\"list_notes\",status=\"2xx\"} 3\n") != std::string::npos);
    BOOST_TEST(text.find("notesd_request_duration_seconds_bucket{endpoint=\"list_notes\",le=\"0.001\"} 2\n") != std::string::npos);
    BOOST_TEST(text.find("notesd_request_duration_seconds_bucket{endpoint=\"list_notes\",le=\"0.025\"} 3\n") != std::string::npos);
    BOOST_TEST(text.find("notesd_request_duration_seconds_bucket{endpoint=\"list_notes\",le=\"+Inf\"} 3\n") != std::string::npos);
    BOOST_TEST(text.find("notesd_request_duration_seconds_sum{endpoint=\"list_notes\"} 0.0025\n") != std::string::npos);
    BOOST_TEST(text.find("notesd_listen_queue") == std::string::npos, "unknown: left out");
    const std::string json = render_status_json(r);
    BOOST_TEST(json.find("\"listen_queue\":null") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(status_socket_next_to_listen) {
    Config c;
    c.listen = "/run/notesd/notesd.sock";
    BOOST_TEST(status_listen_address(c) == "/run/notesd/notesd-status.sock");
    c.listen = "/tmp/x/api";
    BOOST_TEST(status_listen_address(c) == "/tmp/x/api-status");
    c.listen = "127.0.0.1:9000";
    BOOST_TEST(status_listen_address(c) == "");
    c.status_listen = "127.0.0.1:9001";
    BOOST_TEST(status_listen_address(c) == "127.0.0.1:9001");
    c.status_listen = "off";
    BOOST_TEST(status_listen_address(c) == "");
}

BOOST_AUTO_TEST_CASE(new_keys_are_validated) {
    Config c;
    c.secret = std::string(32, 's');
    auto has = [](const std::vector<std::string>& v, const std::string& word) {
        for (const auto& p : v)
            if (p.find(word) != std::string::npos) return true;
        return false;
    };
    BOOST_TEST(!has(validate(c), "io_timeout_ms"));
    BOOST_TEST(apply_setting(c, "io_timeout_ms", "50") == "");
    BOOST_TEST(has(validate(c), "io_timeout_ms"));
    BOOST_TEST(apply_setting(c, "slow_request_ms", "-1") == "");
    BOOST_TEST(has(validate(c), "slow_request_ms"));
    BOOST_TEST(apply_setting(c, "status_listen", "host:notaport") == "");
    BOOST_TEST(!has(validate(c), "status_listen"));  // the server layer parses addresses
    BOOST_TEST(has(check_config(c), "status_listen"));
}

BOOST_AUTO_TEST_CASE(phase_clock_splits_the_time) {
    PhaseClock clock;
    clock.mark(Phase::store);  // no request: ignored
    clock.start(Phase::read);
    clock.mark(Phase::auth);
    clock.mark(Phase::store);
    const auto total = clock.stop();
    std::int64_t sum = 0;
    for (int p = 0; p < kPhaseCount; ++p) sum += clock.spent_ns(static_cast<Phase>(p));
    BOOST_TEST(sum == total);
    BOOST_TEST(clock.spent_ns(Phase::rank) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
