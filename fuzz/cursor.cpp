// The cursor codec: decode(encode(x)) == x for every state; a cursor decodes only for the user
// and scope it was issued for; a text changed in any one character never decodes to another
// state; arbitrary text never decodes at all (that would be a forged MAC).
#include <cstring>

#include "api/cursor.hpp"
#include "fuzz_check.hpp"

using namespace notesd;

namespace {
long long take64(const uint8_t*& p, std::size_t& n) {
    unsigned long long v = 0;
    for (int i = 0; i < 8; ++i) {
        v = (v << 8) | (n ? *p : 0);
        if (n) ++p, --n;
    }
    return static_cast<long long>(v);
}

bool same(const CursorState& a, const CursorState& b) {
    return a.sort_us == b.sort_us && a.id == b.id && a.total == b.total;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    static const CursorCodec codec("fuzz secret that is long enough for the codec 0123456789");
    const std::string_view text = notesd_fuzz::as_text(data, size);
    FUZZ_CHECK(!codec.decode(text, 1, "notes|updated_at"), "arbitrary text decoded (a forged MAC)");

    const uint8_t* p = data;
    std::size_t n = size;
    CursorState s;
    s.sort_us = take64(p, n);
    static const char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) {
        const unsigned b = n ? *p : 0;
        if (n) ++p, --n;
        if (i == 4 || i == 6 || i == 8 || i == 10) s.id += '-';
        s.id += kHex[b >> 4];
        s.id += kHex[b & 15];
    }
    s.total = take64(p, n) & 0x7fffffffffffffffLL;  // totals are never negative
    const long long user = take64(p, n);
    const std::string scope(reinterpret_cast<const char*>(p), n);

    const std::string c = codec.encode(s, user, scope);
    auto back = codec.decode(c, user, scope);
    FUZZ_CHECK(back && same(*back, s), "decode(encode(x)) != x");
    FUZZ_CHECK(!codec.decode(c, user ^ 1, scope), "decoded for another user");  // no overflow
    FUZZ_CHECK(!codec.decode(c, user, scope + "x"), "decoded for another scope");
    static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.";
    const std::size_t at = size ? data[0] % c.size() : 0;
    for (const char* r = kAlphabet; *r; ++r) {
        std::string t = c;
        t[at] = *r;
        auto d = codec.decode(t, user, scope);
        // '+' and '/' are the standard alphabet's spelling of '-' and '_': the same bits.
        FUZZ_CHECK(!d || same(*d, s), "a tampered cursor decoded to another state");
    }
    FUZZ_CHECK(!codec.decode(c.substr(0, c.size() - 1), user, scope), "a truncated cursor decoded");
    return 0;
}
