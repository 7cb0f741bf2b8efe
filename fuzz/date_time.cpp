// RFC 3339 date-time parsing: any text either fails or gives a time that format_time writes as
// text parse_time reads back to the same value; every time format_time writes (years 0001-9999)
// reads back exactly.
#include "base/util.hpp"
#include "fuzz_check.hpp"

using namespace notesd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    constexpr long long kMin = -62135596800LL * 1000000;         // 0001-01-01T00:00:00Z
    constexpr long long kMax = 253402300799LL * 1000000 + 999999;  // 9999-12-31T23:59:59.999999Z
    const std::string_view text = notesd_fuzz::as_text(data, size);
    if (auto t = parse_time(text)) {
        if (*t >= kMin && *t <= kMax) {
            auto again = parse_time(format_time(*t));
            FUZZ_CHECK(again && *again == *t, std::string(text) + " -> " + format_time(*t));
        }
    }
    if (size >= 8) {
        unsigned long long u = 0;
        for (int i = 0; i < 8; ++i) u = (u << 8) | data[i];
        const long long t = kMin + static_cast<long long>(u % static_cast<unsigned long long>(kMax - kMin + 1));
        const std::string s = format_time(t);
        auto back = parse_time(s);
        FUZZ_CHECK(back && *back == t, s);
    }
    return 0;
}
