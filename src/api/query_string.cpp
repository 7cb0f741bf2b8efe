#include "api/query_string.hpp"

#include "api/errors.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '+') {
            out += ' ';
        } else if (c == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

QueryArgs::QueryArgs(std::string_view raw) {
    while (!raw.empty()) {
        std::size_t amp = raw.find('&');
        std::string_view part = raw.substr(0, amp);
        raw = amp == std::string_view::npos ? std::string_view() : raw.substr(amp + 1);
        if (part.empty()) continue;
        std::size_t eq = part.find('=');
        auto key = percent_decode(part.substr(0, eq));
        if (!key) continue;  // a key we cannot decode cannot be a known one: ignored
        Pair p;
        p.key = std::move(*key);
        auto value = percent_decode(eq == std::string_view::npos ? std::string_view()
                                                                 : part.substr(eq + 1));
        if (value && valid_utf8(*value))
            p.value = std::move(*value);
        else
            p.malformed = true;
        pairs_.push_back(std::move(p));
    }
}

std::optional<std::string> QueryArgs::get(std::string_view key) const {
    const Pair* found = nullptr;
    for (const Pair& p : pairs_) {
        if (p.key != key) continue;
        if (found) {
            std::string k(key);
            throw invalid_parameter(k, k + " must be given at most once");
        }
        found = &p;
    }
    if (!found) return std::nullopt;
    if (found->malformed) {
        std::string k(found->key);
        throw invalid_parameter(k, k + " is not correctly percent-encoded UTF-8");
    }
    return found->value;
}

}  // namespace notesd
