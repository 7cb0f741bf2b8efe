#include "base/json_check.hpp"

#include "base/util.hpp"

#include <cstdio>
#include <unordered_set>
#include <vector>

namespace notesd {
namespace {

std::string hex_byte(unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", c);
    return buf;
}

std::string code_point(unsigned cp) {
    char buf[12];
    std::snprintf(buf, sizeof buf, "U+%04X", cp);
    return buf;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Bytes a string holds as they are (printable ASCII other than '"' and '\\'): one table load per
// byte in the loop that sees most of a body.
struct PlainBytes {
    bool plain[256] = {};
    constexpr PlainBytes() {
        for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
    }
    constexpr bool operator[](unsigned char c) const { return plain[c]; }
};
constexpr PlainBytes kPlain;

// Thrown inside the checker only, caught by check_json_text: the first problem ends the scan.
struct Stop {
    JsonSyntaxError error;
};

class Checker {
public:
    Checker(std::string_view text, std::size_t max_depth, bool find_duplicate_keys)
        : s_(text), max_depth_(max_depth), dup_(find_duplicate_keys) {}

    void run() {
        skip_ws();
        for (;;) {
            value();
            // After a value: close containers, or move to the next element or member.
            for (;;) {
                skip_ws();
                if (depth_ == 0) {
                    if (i_ != s_.size()) fail(i_, "trailing " + what_is(i_) + " after the JSON value");
                    return;
                }
                if (i_ == s_.size())
                    fail(i_, std::string("unexpected end of the body inside an ") +
                                 (in_object() ? "object" : "array"));
                const char c = s_[i_];
                if (c == ',') {
                    ++i_;
                    skip_ws();
                    if (in_object()) member_key();
                    break;
                }
                if (c == (in_object() ? '}' : ']')) {
                    ++i_;
                    close();
                    continue;
                }
                fail(i_, std::string("expected ',' or '") + (in_object() ? '}' : ']') +
                             "' but found " + what_is(i_));
            }
        }
    }

private:
    [[noreturn]] void fail(std::size_t at, std::string problem) {
        throw Stop{JsonSyntaxError{at, std::move(problem)}};
    }

    // Names the byte at `at` for a message: NUL and control bytes by code, others as they are.
    std::string what_is(std::size_t at) const {
        if (at >= s_.size()) return "the end of the body";
        const unsigned char c = static_cast<unsigned char>(s_[at]);
        if (c == 0) return "a NUL byte";
        if (c < 0x20 || c >= 0x7f) return "byte " + hex_byte(c);
        return std::string("'") + static_cast<char>(c) + "'";
    }

    bool in_object() const { return open_[depth_ - 1]; }

    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
            ++i_;
    }

    void open(bool is_object) {
        if (depth_ >= max_depth_)
            fail(i_, "arrays and objects nested deeper than " + std::to_string(max_depth_) + " levels");
        if (depth_ == open_.size())
            open_.push_back(is_object);
        else
            open_[depth_] = is_object;
        ++depth_;
        if (dup_ && is_object) keys_.emplace_back();
        ++i_;
    }

    void close() {
        if (dup_ && in_object()) keys_.pop_back();
        --depth_;
    }

    void member_key() {
        skip_ws();
        if (i_ == s_.size() || s_[i_] != '"')
            fail(i_, "expected a member name in double quotes but found " + what_is(i_));
        const std::size_t at = i_;
        string(dup_ ? &key_ : nullptr);
        if (dup_) {
            if (!keys_.back().insert(key_).second) fail(at, "duplicate key \"" + key_ + "\"");
        }
        skip_ws();
        if (i_ == s_.size() || s_[i_] != ':') fail(i_, "expected ':' but found " + what_is(i_));
        ++i_;
    }

    // One value; an array or object is only opened here (its members follow in run()).
    void value() {
        for (;;) {
            skip_ws();
            if (i_ == s_.size()) fail(i_, "unexpected end of the body where a value was expected");
            const char c = s_[i_];
            if (c == '{' || c == '[') {
                const bool object = c == '{';
                open(object);
                skip_ws();
                if (i_ < s_.size() && s_[i_] == (object ? '}' : ']')) {  // {} or []
                    ++i_;
                    close();
                    return;
                }
                if (object) member_key();
                continue;
            }
            if (c == '"') return string(nullptr);
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            if (literal("true") || literal("false") || literal("null")) return;
            fail(i_, "expected a value but found " + what_is(i_));
        }
    }

    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }

    void digits(const char* what) {
        if (i_ == s_.size() || s_[i_] < '0' || s_[i_] > '9') fail(i_, std::string("a digit expected ") + what);
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    }

    void number() {
        const std::size_t start = i_;
        if (s_[i_] == '-') ++i_;
        if (i_ < s_.size() && s_[i_] == '0') {
            ++i_;
            if (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
                fail(start, "a number with a leading zero");
        } else {
            digits("in a number");
        }
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            digits("after the decimal point");
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            digits("in the exponent");
        }
    }

    unsigned hex4(std::size_t at) {
        unsigned v = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const int h = at + k < s_.size() ? hex_value(s_[at + k]) : -1;
            if (h < 0) fail(at - 2, "an invalid \\u escape (four hex digits expected)");
            v = v * 16 + static_cast<unsigned>(h);
        }
        return v;
    }

    // A string from its opening quote; its decoded text goes to `out` when given.
    void string(std::string* out) {
        if (out) out->clear();
        ++i_;
        for (;;) {
            // The common case: printable ASCII other than the quote and the backslash.
            // (A local index: i_ would be stored back on every byte, as the bytes may alias it.)
            const std::size_t run = i_;
            std::size_t j = i_;
            while (j < s_.size() && kPlain[static_cast<unsigned char>(s_[j])]) ++j;
            i_ = j;
            if (out) out->append(s_.data() + run, i_ - run);
            if (i_ == s_.size()) fail(i_, "unexpected end of the body inside a string");
            const unsigned char c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') {
                ++i_;
                return;
            }
            if (c == '\\') {
                escape(out);
            } else if (c == 0) {
                fail(i_, "a NUL byte in a string");
            } else if (c < 0x20) {
                fail(i_, "a raw control character " + code_point(c) + " in a string (escape it)");
            } else {
                const std::size_t start = i_;
                utf8_sequence();
                if (out) out->append(s_.data() + start, i_ - start);
            }
        }
    }

    void escape(std::string* out) {
        const std::size_t at = i_;
        if (i_ + 1 >= s_.size()) fail(at, "unexpected end of the body inside a string");
        const char e = s_[i_ + 1];
        i_ += 2;
        static constexpr std::string_view kFrom = "\"\\/bfnrt";
        static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
        if (auto k = kFrom.find(e); k != std::string_view::npos) {
            if (out) *out += kTo[k];
            return;
        }
        if (e != 'u') fail(at, "an invalid escape \\" + what_is(at + 1));
        unsigned cp = hex4(i_);
        i_ += 4;
        if (cp >= 0xdc00 && cp <= 0xdfff) fail(at, "an escaped lone surrogate " + code_point(cp));
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (s_.substr(i_, 2) != "\\u") fail(at, "an escaped lone surrogate " + code_point(cp));
            const unsigned low = hex4(i_ + 2);
            if (low < 0xdc00 || low > 0xdfff) fail(at, "an escaped lone surrogate " + code_point(cp));
            i_ += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        if (out) append_utf8(*out, cp);
    }

    // One multi-byte UTF-8 character: shortest form, no surrogates, at most U+10FFFF.
    void utf8_sequence() {
        const unsigned char c = static_cast<unsigned char>(s_[i_]);
        std::size_t len;
        unsigned cp;
        if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
        else fail(i_, "invalid UTF-8 (byte " + hex_byte(c) + ")");
        if (i_ + len > s_.size()) fail(i_, "invalid UTF-8 (a truncated sequence)");
        for (std::size_t k = 1; k < len; ++k) {
            const unsigned char cc = static_cast<unsigned char>(s_[i_ + k]);
            if ((cc & 0xc0) != 0x80) fail(i_, "invalid UTF-8 (byte " + hex_byte(cc) + " in a sequence)");
            cp = (cp << 6) | (cc & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            fail(i_, "invalid UTF-8 (an overlong form, a surrogate or a code point past U+10FFFF)");
        i_ += len;
    }

    std::string_view s_;
    std::size_t max_depth_;
    bool dup_;
    std::size_t i_ = 0;
    // One byte per open container, 1 object, 0 array (no allocation up to 15), of which the first
    // depth_ are open now: closing one only counts down (std::string::pop_back is a call to
    // _M_erase, a sixth of the check's time on a search body).
    std::string open_;
    std::size_t depth_ = 0;
    // Keys seen in each open object: hashed, as a body of 64 KiB holds thousands of keys.
    std::vector<std::unordered_set<std::string>> keys_;
    std::string key_;
};

}  // namespace

std::optional<JsonSyntaxError> check_json_text(std::string_view text, std::size_t max_depth,
                                               bool find_duplicate_keys) {
    Checker checker(text, max_depth, find_duplicate_keys);
    try {
        checker.run();
    } catch (const Stop& s) {
        return s.error;
    }
    return std::nullopt;
}

std::string describe(const JsonSyntaxError& e) {
    return e.problem + " at byte " + std::to_string(e.offset);
}

}  // namespace notesd
