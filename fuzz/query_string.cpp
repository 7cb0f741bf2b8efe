// The query-string decoder: QueryArgs never throws while splitting; get() throws only the
// documented 400 INVALID_PARAMETER naming the key; a value it returns is valid UTF-8; and
// percent_decode inverts percent-encoding for any bytes.
#include "api/query_string.hpp"
#include "base/util.hpp"
#include "fuzz_check.hpp"

using namespace notesd;

namespace {
std::string percent_encode(std::string_view s) {
    static const char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view raw = notesd_fuzz::as_text(data, size);
    const QueryArgs args(raw);
    for (const char* key : {"limit", "page", "order_by", "collection_id", "q", "", "a b", "\xff"}) {
        try {
            if (auto v = args.get(key)) FUZZ_CHECK(valid_utf8(*v), key);
        } catch (const ApiError& e) {
            notesd_fuzz::expect_error(e, 400, "INVALID_PARAMETER");
            FUZZ_CHECK(e.field() == key, e.field());
        }
    }
    auto round = percent_decode(percent_encode(raw));
    FUZZ_CHECK(round && *round == raw, "percent_decode(percent_encode(x)) != x");
    // A key given once, encoded, is read back exactly (when it is UTF-8).
    if (valid_utf8(raw)) {
        const QueryArgs one("x=1&limit=" + percent_encode(raw) + "&y");
        auto v = one.get("limit");
        FUZZ_CHECK(v && *v == raw, "limit=<encoded input> does not read back");
    }
    return 0;
}
