// Micro-benchmark of request body parsing (doc/benchmarks.md, "Strict JSON"): nanoseconds per
// body for typical search and write bodies, through parse_json_object (check_json_text, then
// jsoncpp) and through what it replaced (a UTF-8 check, a comment scan, jsoncpp's strict reader).
//   tools/json_parse_bench [ROUNDS]     (each variant: the fastest of 7 runs of ROUNDS calls)
#include <json/json.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "api/json_io.hpp"
#include "base/json_check.hpp"
#include "base/util.hpp"

using namespace notesd;

namespace {

std::string note_body(std::size_t content_bytes) {
    std::string content;
    const std::string line = "- [ ] follow up with the caf\\u00e9 team about \\\"Q3\\\" numbers\\n";
    while (content.size() < content_bytes) content += line;
    return "{\"title\":\"Meeting notes 2025-05-04\",\"content\":\"" + content +
           "\",\"collection_ids\":[\"3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01\","
           "\"10000000-0000-4000-8000-00000000000b\"],\"created_at\":\"2025-05-04T14:20:11Z\"}";
}

// The comment scan parse_json_object ran before check_json_text replaced it (with valid_utf8 and
// jsoncpp it was the whole "before" path).
bool had_comment(const std::string& body) {
    bool in_string = false;
    for (std::size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '/') {
            return true;
        }
    }
    return false;
}

template <class F>
double ns_per_call(int rounds, const F& f) {
    f();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < rounds; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / rounds;
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
    std::unique_ptr<Json::CharReader> strict;
    {
        Json::CharReaderBuilder b;
        Json::CharReaderBuilder::strictMode(&b.settings_);
        b["stackLimit"] = 64;
        strict.reset(b.newCharReader());
    }
    const std::vector<std::pair<const char*, std::string>> bodies = {
        {"search (47 B)", "{\"query\":\"meeting notes\",\"limit\":20}"},
        {"search, filters (260 B)",
         "{\"query\":\"caf\\u00e9 \\\"exact phrase\\\"\",\"limit\":50,\"config\":{\"include_note_content\":true},"
         "\"filter_by_collection_ids\":[\"3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01\"],"
         "\"filter_by_created_after\":\"2025-01-01T00:00:00Z\",\"filter_by_contains_open_tasks\":true}"},
        {"note write (2 KB)", note_body(2000)},
        {"note write (60 KB)", note_body(60000)},
    };
    // before: valid_utf8 + comment scan + jsoncpp; after: parse_json_object; the last two columns
    // are the scans alone: check_json_text, and the two it replaced.
    std::printf("%-26s %11s %11s %8s %11s %11s\n", "body", "before ns", "after ns", "ratio", "check ns",
                "replaced ns");
    for (const auto& [name, body] : bodies) {
        std::size_t sink = 0;
        // Interleaved repetitions, the fastest of each: other load on the machine only adds time.
        double before = 1e18, after = 1e18, check = 1e18, scans = 1e18;
        for (int rep = 0; rep < 7; ++rep) {
            before = std::min(before, ns_per_call(rounds, [&] {
                Json::Value v;
                std::string errs;
                sink += valid_utf8(body) && !had_comment(body) &&
                        strict->parse(body.data(), body.data() + body.size(), &v, &errs);
            }));
            after = std::min(after, ns_per_call(rounds, [&] { sink += parse_json_object(body).size(); }));
            check = std::min(check, ns_per_call(rounds, [&] { sink += !check_json_text(body, 64); }));
            scans = std::min(scans, ns_per_call(rounds, [&] { sink += valid_utf8(body) && !had_comment(body); }));
        }
        std::printf("%-26s %11.0f %11.0f %8.3f %11.0f %11.0f%s\n", name, before, after, after / before, check,
                    scans, sink ? "" : " ");
    }
    return 0;
}
