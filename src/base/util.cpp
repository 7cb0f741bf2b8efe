#include "base/util.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace notesd {
namespace {

const char kHex[] = "0123456789abcdef";

std::string hex(const unsigned char* p, std::size_t n) {
    std::string out(n * 2, '0');
    for (std::size_t i = 0; i < n; ++i) {
        out[2 * i] = kHex[p[i] >> 4];
        out[2 * i + 1] = kHex[p[i] & 15];
    }
    return out;
}

std::string format_uuid_bytes(const unsigned char* b) {
    std::string out(36, '-');
    std::size_t pos = 0;
    for (std::size_t i = 0; i < 16; ++i) {
        if (pos == 8 || pos == 13 || pos == 18 || pos == 23) ++pos;
        out[pos++] = kHex[b[i] >> 4];
        out[pos++] = kHex[b[i] & 15];
    }
    return out;
}

// Each byte's value as a hex digit, -1 for the others: one load instead of three unpredictable
// branches per digit (a search's snapshot converts 100 ids).
constexpr std::array<signed char, 256> kHexValue = [] {
    std::array<signed char, 256> t{};
    for (signed char& v : t) v = -1;
    for (int i = 0; i < 10; ++i) t[static_cast<std::size_t>('0' + i)] = static_cast<signed char>(i);
    for (int i = 0; i < 6; ++i) {
        t[static_cast<std::size_t>('a' + i)] = static_cast<signed char>(10 + i);
        t[static_cast<std::size_t>('A' + i)] = static_cast<signed char>(10 + i);
    }
    return t;
}();

int hexval(char c) { return kHexValue[static_cast<unsigned char>(c)]; }

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}


bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}

}  // namespace

void civil_from_days(long long z, long long& y, unsigned& m, unsigned& d) {
    z += 719468;
    const long long era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<long long>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
}

std::string random_bytes(std::size_t n) {
    std::string out(n, '\0');
    if (n && RAND_bytes(reinterpret_cast<unsigned char*>(&out[0]), static_cast<int>(n)) != 1)
        throw std::runtime_error("random number generator failed");
    return out;
}

std::string new_uuid() {
    std::string b = random_bytes(16);
    auto* u = reinterpret_cast<unsigned char*>(&b[0]);
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    return format_uuid_bytes(u);
}

std::string random_id128() {
    std::string b = random_bytes(16);
    return format_uuid_bytes(reinterpret_cast<const unsigned char*>(b.data()));
}

std::string stable_uuid(std::string_view name) {
    // RFC 4122 version 5 in a private namespace (a fixed random UUID chosen for notesd).
    static const unsigned char kNamespace[16] = {0x6b, 0x1f, 0x3c, 0x52, 0x9e, 0x0d, 0x4a, 0x8b,
                                                 0xa1, 0x57, 0x2c, 0x90, 0x4e, 0xd3, 0x11, 0x7f};
    unsigned char digest[SHA_DIGEST_LENGTH];
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr);
    EVP_DigestUpdate(ctx, kNamespace, sizeof kNamespace);
    EVP_DigestUpdate(ctx, name.data(), name.size());
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, digest, &len);
    EVP_MD_CTX_free(ctx);
    digest[6] = (digest[6] & 0x0f) | 0x50;
    digest[8] = (digest[8] & 0x3f) | 0x80;
    return format_uuid_bytes(digest);
}

namespace {

constexpr unsigned long long kSignBit = 0x8000000000000000ULL;

int hex_digit_value(char c) { return std::max(0, hexval(c)); }

}  // namespace

void uuid_halves(const std::string& canonical_uuid, long long& hi, long long& lo) {
    unsigned long long h = 0, l = 0;
    int n = 0;
    for (char c : canonical_uuid) {
        if (c == '-') continue;
        unsigned long long& half = n < 16 ? h : l;
        half = (half << 4) | static_cast<unsigned long long>(hex_digit_value(c));
        ++n;
    }
    hi = static_cast<long long>(h ^ kSignBit);
    lo = static_cast<long long>(l ^ kSignBit);
}

std::string uuid_from_halves(long long hi, long long lo) {
    const unsigned long long halves[2] = {static_cast<unsigned long long>(hi) ^ kSignBit,
                                          static_cast<unsigned long long>(lo) ^ kSignBit};
    unsigned char b[16];
    for (int i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(halves[i / 8] >> (8 * (7 - i % 8)));
    return format_uuid_bytes(b);
}

namespace {

// The 16 bytes of a uuid in canonical layout (8-4-4-4-12 hex digits, either case); false when
// s is not one.
bool uuid_bytes(std::string_view s, unsigned char (&b)[16]) {
    if (s.size() != 36) return false;
    int n = 0;
    for (std::size_t i = 0; i < 36; ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return false;
            continue;
        }
        const int v = hexval(s[i]);
        if (v < 0) return false;
        b[n / 2] = static_cast<unsigned char>(b[n / 2] << 4 | v);
        ++n;
    }
    return true;
}

}  // namespace

bool append_uuid_bytes(std::string& out, std::string_view s) {
    unsigned char b[16] = {};
    if (!uuid_bytes(s, b)) return false;
    out.append(reinterpret_cast<const char*>(b), 16);
    return true;
}

std::string uuid_from_bytes(std::string_view bytes16) {
    return format_uuid_bytes(reinterpret_cast<const unsigned char*>(bytes16.data()));
}

std::optional<std::string> parse_uuid(std::string_view s) {
    unsigned char b[16] = {};
    if (!uuid_bytes(s, b)) return std::nullopt;
    return format_uuid_bytes(b);
}

std::string request_id_from(std::string_view nginx_id) {
    bool ok = nginx_id.size() == 32;
    for (char c : nginx_id) ok = ok && hexval(c) >= 0;
    if (!ok) return "api-request-" + new_uuid();
    std::string h(nginx_id);
    for (char& c : h) c = kHex[hexval(c)];
    return "api-request-" + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" +
           h.substr(16, 4) + "-" + h.substr(20, 12);
}

long long now_us() {
    using namespace std::chrono;
    return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::string format_time(long long us) {
    long long secs = us / 1000000, frac = us % 1000000;
    if (frac < 0) {
        frac += 1000000;
        secs -= 1;
    }
    long long days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    long long y;
    unsigned m, d;
    civil_from_days(days, y, m, d);
    if (y >= 0 && y <= 9999) {  // every stored time: digits written directly (no snprintf)
        char buf[32];
        char* p = buf;
        auto put = [&p](long long v, int width) {
            for (int k = width - 1; k >= 0; --k) {
                p[k] = static_cast<char>('0' + v % 10);
                v /= 10;
            }
            p += width;
        };
        put(y, 4), *p++ = '-', put(m, 2), *p++ = '-', put(d, 2), *p++ = 'T';
        put(rem / 3600, 2), *p++ = ':', put(rem / 60 % 60, 2), *p++ = ':', put(rem % 60, 2);
        if (frac != 0) {
            *p++ = '.';
            if (frac % 1000 == 0)
                put(frac / 1000, 3);
            else
                put(frac, 6);
        }
        *p++ = 'Z';
        return std::string(buf, static_cast<std::size_t>(p - buf));
    }
    char buf[64];
    int n = std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld", y, m, d,
                          rem / 3600, rem / 60 % 60, rem % 60);
    if (frac != 0) {
        if (frac % 1000 == 0)
            n += std::snprintf(buf + n, sizeof buf - n, ".%03lld", frac / 1000);
        else
            n += std::snprintf(buf + n, sizeof buf - n, ".%06lld", frac);
    }
    std::snprintf(buf + n, sizeof buf - n, "Z");
    return buf;
}

std::optional<long long> parse_time(std::string_view s) {
    int y, mo, d, h, mi, se;
    if (!digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, mo) ||
        s[7] != '-' || !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't') ||
        !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
        !digits(s, 17, 2, se))
        return std::nullopt;
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59) return std::nullopt;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > kDays[mo - 1] + (mo == 2 && leap ? 1 : 0)) return std::nullopt;
    std::size_t pos = 19;
    long long frac = 0;
    if (pos < s.size() && s[pos] == '.') {
        ++pos;
        std::size_t start = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
        std::size_t n = pos - start;
        if (n == 0 || n > 6) return std::nullopt;
        for (std::size_t i = 0; i < 6; ++i)
            frac = frac * 10 + (i < n ? s[start + i] - '0' : 0);
    }
    if (pos >= s.size()) return std::nullopt;
    long long offset_s = 0;
    char sign = s[pos];
    if ((sign == 'Z' || sign == 'z') && pos + 1 == s.size()) {
        offset_s = 0;
    } else if (sign == '+' || sign == '-' || sign == ' ') {
        int oh, om;
        if (s.size() != pos + 6 || !digits(s, pos + 1, 2, oh) || s[pos + 3] != ':' ||
            !digits(s, pos + 4, 2, om) || oh > 23 || om > 59)
            return std::nullopt;
        offset_s = (oh * 3600LL + om * 60LL) * (sign == '-' ? -1 : 1);
    } else {
        return std::nullopt;
    }
    long long secs = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400LL +
                     h * 3600LL + mi * 60LL + se - offset_s;
    return secs * 1000000LL + frac;
}

std::string sha256_hex(std::string_view data) {
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
    return hex(md, sizeof md);
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
    return std::string(reinterpret_cast<char*>(md), len);
}

bool secure_equals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

std::string base64url_encode(std::string_view in) {
    static const char kAlpha[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                     (static_cast<unsigned char>(in[i + 1]) << 8) |
                     static_cast<unsigned char>(in[i + 2]);
        out += kAlpha[v >> 18];
        out += kAlpha[(v >> 12) & 63];
        out += kAlpha[(v >> 6) & 63];
        out += kAlpha[v & 63];
    }
    if (i + 1 == in.size()) {
        unsigned v = static_cast<unsigned char>(in[i]) << 16;
        out += kAlpha[v >> 18];
        out += kAlpha[(v >> 12) & 63];
    } else if (i + 2 == in.size()) {
        unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                     (static_cast<unsigned char>(in[i + 1]) << 8);
        out += kAlpha[v >> 18];
        out += kAlpha[(v >> 12) & 63];
        out += kAlpha[(v >> 6) & 63];
    }
    return out;
}

std::optional<std::string> base64_decode_any(std::string_view text) {
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (text.size() % 4 == 1) return std::nullopt;
    std::string out;
    out.reserve(text.size() * 3 / 4);
    unsigned acc = 0;
    int bits = 0;
    for (char c : text) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '-' || c == '+') v = 62;
        else if (c == '_' || c == '/') v = 63;
        else return std::nullopt;
        acc = (acc << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    // Reject non-canonical trailing bits so that every encoding decodes from exactly one text.
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
    return out;
}

bool valid_utf8(std::string_view s) {
    std::size_t i = 0, n = s.size();
    while (i < n) {
        // eight ASCII bytes at a time: most of a note is ASCII, checked by every write
        std::uint64_t word;
        while (i + 8 <= n && (std::memcpy(&word, s.data() + i, 8), (word & 0x8080808080808080ULL) == 0)) i += 8;
        if (i >= n) break;
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) { ++i; continue; }
        int len;
        unsigned cp;
        if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
        else return false;
        if (i + len > n) return false;
        for (int k = 1; k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += len;
    }
    return true;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

std::size_t utf8_length(std::string_view s) {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++n;
    return n;
}

const char* find_space(const char* p, const char* end) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
    constexpr std::uint64_t kSpaces = 0x2020202020202020ULL;
    while (end - p >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        const std::uint64_t x = w ^ kSpaces;  // a space byte becomes 0
        // the lowest byte flagged here is the first zero byte (borrows only flag bytes above it)
        if (const std::uint64_t z = (x - kOnes) & ~x & kHighs; z != 0) {
            if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
                return p + (__builtin_ctzll(z) >> 3);
            break;  // big-endian: finish byte by byte
        }
        p += 8;
    }
    while (p < end && *p != ' ') ++p;
    return p;
}

}  // namespace notesd
