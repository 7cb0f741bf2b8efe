#include "api/cursor.hpp"

#include "base/util.hpp"

namespace notesd {
namespace {

constexpr unsigned char kVersion = 1;
constexpr unsigned char kVersionWithTie = 2;  // the payload ends with CursorState::tie
constexpr std::size_t kMacBytes = 16;       // 128-bit truncated HMAC-SHA256
constexpr std::size_t kPayloadBytes = 1 + 8 + 16 + 8;
constexpr std::size_t kTieBytes = 8;

void put64(std::string& out, long long v) {
    auto u = static_cast<unsigned long long>(v);
    for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((u >> shift) & 0xff);
}

long long get64(std::string_view in, std::size_t pos) {
    unsigned long long u = 0;
    for (std::size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<unsigned char>(in[pos + i]);
    return static_cast<long long>(u);
}

int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

}  // namespace

CursorCodec::CursorCodec(std::string_view secret)
    // A derived key keeps cursor MACs separate from any other use of the shared secret.
    : key_(hmac_sha256(secret, "notesd cursor key v1")) {}

std::string CursorCodec::mac(std::string_view payload, long long user_id,
                             std::string_view scope) const {
    std::string msg(payload);
    put64(msg, user_id);
    msg.append(scope.data(), scope.size());
    return hmac_sha256(key_, msg).substr(0, kMacBytes);
}

std::string CursorCodec::encode(const CursorState& s, long long user_id,
                                std::string_view scope) const {
    std::string payload;
    payload += static_cast<char>(s.tie ? kVersionWithTie : kVersion);
    put64(payload, s.sort_us);
    // ids are canonical lowercase uuids: pack the 32 hex digits into 16 bytes
    std::string hex;
    for (char c : s.id)
        if (c != '-') hex += c;
    for (std::size_t i = 0; i + 1 < hex.size() && i < 32; i += 2)
        payload += static_cast<char>(hexval(hex[i]) * 16 + hexval(hex[i + 1]));
    put64(payload, s.total);
    if (s.tie) put64(payload, *s.tie);
    return base64url_encode(payload + mac(payload, user_id, scope));
}

std::optional<CursorState> CursorCodec::decode(std::string_view text, long long user_id,
                                               std::string_view scope) const {
    if (text.size() > 200) return std::nullopt;
    auto raw = base64_decode_any(text);
    if (!raw || raw->size() <= kMacBytes) return std::nullopt;
    const std::size_t size = raw->size() - kMacBytes;
    std::string_view payload(raw->data(), size);
    std::string_view tag(raw->data() + size, kMacBytes);
    if (!secure_equals(tag, mac(payload, user_id, scope))) return std::nullopt;
    const auto version = static_cast<unsigned char>(payload[0]);
    const bool with_tie = version == kVersionWithTie;
    if (!(version == kVersion && size == kPayloadBytes) &&
        !(with_tie && size == kPayloadBytes + kTieBytes))
        return std::nullopt;
    CursorState s;
    s.sort_us = get64(payload, 1);
    static const char kHex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < 16; ++i) {
        auto b = static_cast<unsigned char>(payload[9 + i]);
        if (i == 4 || i == 6 || i == 8 || i == 10) s.id += '-';
        s.id += kHex[b >> 4];
        s.id += kHex[b & 15];
    }
    s.total = get64(payload, 25);
    if (with_tie) s.tie = get64(payload, kPayloadBytes);
    if (s.total < 0) return std::nullopt;
    return s;
}

}  // namespace notesd
