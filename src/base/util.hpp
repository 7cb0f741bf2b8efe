// Small shared helpers: UUIDs, RFC 3339 time, hashing and HMAC, base64url, UTF-8.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace notesd {

/// A random (version 4) UUID, lowercase canonical form.
std::string new_uuid();
/// 128 random bits in the canonical 8-4-4-4-12 form (no version bits: unguessable ids).
std::string random_id128();
/// A name-based (version 5, SHA-1) UUID in a fixed notesd namespace: stable across runs.
std::string stable_uuid(std::string_view name);
/// Canonical lowercase form of an 8-4-4-4-12 hex UUID in any case, or nullopt.
std::optional<std::string> parse_uuid(std::string_view s);
/// A canonical uuid's two 64-bit halves with the sign bit flipped: their signed order is the
/// uuid's text order, on every database backend.
void uuid_halves(const std::string& canonical_uuid, long long& hi, long long& lo);
/// The canonical uuid of two halves made by uuid_halves.
std::string uuid_from_halves(long long hi, long long lo);
/// Appends the 16 bytes of an 8-4-4-4-12 hex UUID in any case; false (out unchanged) when s is
/// not one. uuid_from_bytes gives the canonical text back.
bool append_uuid_bytes(std::string& out, std::string_view s);
/// Canonical lowercase UUID of 16 bytes.
std::string uuid_from_bytes(std::string_view bytes16);
/// "api-request-<uuid>" from nginx's 32-hex $request_id; a random one when absent or malformed.
std::string request_id_from(std::string_view nginx_request_id);

/// Proleptic Gregorian date of a day count since 1970-01-01. Plain arithmetic, so it is safe in a
/// signal handler (gmtime_r is not on the async-signal-safe list).
void civil_from_days(long long days, long long& y, unsigned& m, unsigned& d);
/// Current UTC time in epoch microseconds.
long long now_us();
/// RFC 3339 UTC with Z; fraction only when non-zero (3 digits, or 6 when microseconds are set).
std::string format_time(long long epoch_us);
/// Strict RFC 3339 date-time with mandatory offset, fraction up to 6 digits; nullopt when invalid.
/// A space in the offset position is read as '+', as query strings turn '+' into space.
std::optional<long long> parse_time(std::string_view s);

/// Cryptographically random bytes (OpenSSL RAND_bytes); throws on failure.
std::string random_bytes(std::size_t n);
/// SHA-256 of data as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);
/// Raw 32-byte HMAC-SHA256.
std::string hmac_sha256(std::string_view key, std::string_view data);
/// Constant-time equality for secrets.
bool secure_equals(std::string_view a, std::string_view b);

std::string base64url_encode(std::string_view bytes);
/// Accepts base64url or standard alphabet, padded or not; nullopt on any other character.
std::optional<std::string> base64_decode_any(std::string_view text);

/// True when s is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view s);
/// Appends code point cp (at most U+10FFFF, not a surrogate) to out as UTF-8.
void append_utf8(std::string& out, char32_t cp);
/// Number of Unicode code points in valid UTF-8.
std::size_t utf8_length(std::string_view s);

/// The first space byte at or after p, or end: eight bytes at a time, for the short words of
/// stored terms and plain text (a memchr call per word costs more than it saves, and a byte
/// loop mispredicts at every word's end).
const char* find_space(const char* p, const char* end);

}  // namespace notesd
