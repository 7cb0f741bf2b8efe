#include "store/plain_text_codec.hpp"

#include <string.h>  // memmem (GNU)

#include <algorithm>
#include <stdexcept>

namespace notesd::detail {
namespace {

constexpr char kEdits = kPlainTextEdits;
// A shorter run of equal bytes is inserted rather than copied: "c3" saves nothing.
constexpr std::size_t kMinCopy = 4;
// Where the plain text goes on after a difference: kProbe bytes of it looked up in the next
// kNear bytes of the content, starting at each of its next kMaxLead characters (the ones before
// are inserted: markup inside the probe, "[the release" for "the release", or a comma the
// content had in code quotes); failing that, kProbe bytes looked up in the whole rest of the
// content (a long title line or link target left out).
constexpr std::size_t kProbe = 8;
constexpr std::size_t kNear = 256;
constexpr std::size_t kMaxLead = 8;
// The content bytes those look-ups may scan, as a multiple of the two texts' size: a text
// the content does not hold (entities decoded everywhere, say) is then inserted as it is
// instead of costing scans of the content per character. 16 keeps the worst 200,000-character
// note to about 7 ms (64: 35 ms, and the til corpus's edits 35% of its text instead of 40%).
constexpr std::size_t kScanFactor = 16;

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

bool ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void put(std::string& out, char op, std::size_t n) {
    out += op;
    out += std::to_string(n);
}

void put_insert(std::string& out, std::string_view bytes) {
    put(out, 'i', bytes.size());
    out += ':';
    out.append(bytes.data(), bytes.size());
}

// A plain text stored as it is: itself, unless it could be taken for edits.
std::string literal(std::string_view plain) {
    if (plain.empty() || plain[0] != kEdits) return std::string(plain);
    std::string out(1, kEdits);
    put_insert(out, plain);
    return out;
}

[[noreturn]] void corrupt() {
    throw std::runtime_error("a note's stored plain text does not fit its content");
}

}  // namespace

std::string encode_plain_text(std::string_view content, std::string_view plain) {
    std::string out(1, kEdits);
    std::size_t insert_from = 0, inserting = 0;  // plain bytes waiting to be inserted
    auto flush = [&] {
        if (inserting) put_insert(out, plain.substr(insert_from, inserting));
        inserting = 0;
    };
    std::size_t p = 0, q = 0;  // next byte of content, of plain
    std::size_t budget = kScanFactor * (content.size() + plain.size()) + 4096;
    while (q < plain.size()) {
        if (out.size() + inserting >= plain.size()) return literal(plain);  // no shorter
        std::size_t n = 0;
        const std::size_t most = std::min(content.size() - p, plain.size() - q);
        while (n < most && content[p + n] == plain[q + n]) ++n;
        while (n > 0 && q + n < plain.size() && continuation(plain[q + n])) --n;  // whole characters
        if (n >= kMinCopy || (n > 0 && q + n == plain.size())) {
            flush();
            put(out, 'c', n);
            p += n;
            q += n;
            continue;
        }
        if (p == content.size()) {  // nothing left to copy from
            if (!inserting) insert_from = q;
            inserting += plain.size() - q;
            q = plain.size();
            break;
        }
        if (n == 0 && plain[q] == ' ' && ascii_space(content[p])) {  // a line break, say
            flush();
            out += '_';
            ++p;
            ++q;
            continue;
        }
        // After no inserted byte, from the content's next byte: a match right here was cut
        // short at a character boundary above.
        auto find = [&](std::size_t lead, std::size_t window) -> const char* {
            const std::size_t k = std::min(kProbe, plain.size() - q - lead);
            const std::size_t from = p + (lead == 0 ? 1 : 0);
            window = std::min({window, content.size() - from, budget});
            if (k < kMinCopy || window < k) return nullptr;
            const char* at =
                static_cast<const char*>(memmem(content.data() + from, window, plain.data() + q + lead, k));
            budget -= at ? static_cast<std::size_t>(at - content.data() - from) + k : window;
            return at;
        };
        const char* at = nullptr;
        std::size_t lead = 0;
        for (std::size_t chars = 0; !at && chars < kMaxLead && q + lead < plain.size(); ++chars) {
            at = find(lead, kNear);
            if (!at) do ++lead; while (q + lead < plain.size() && continuation(plain[q + lead]));
        }
        if (!at) {
            lead = 0;
            at = find(0, content.size());
        }
        if (at) {
            if (!inserting) insert_from = q;
            inserting += lead;
            q += lead;
            flush();
            const std::size_t to = static_cast<std::size_t>(at - content.data());
            if (to > p) put(out, 's', to - p);
            p = to;
            continue;
        }
        if (!inserting) insert_from = q;
        do {
            ++q;
            ++inserting;
        } while (q < plain.size() && continuation(plain[q]));
    }
    flush();
    if (out.size() >= plain.size()) return literal(plain);
    return out;
}

std::string decode_plain_text(std::string_view content, std::string_view stored) {
    if (!is_plain_text_edits(stored)) return std::string(stored);
    std::string out;
    out.reserve(content.size());
    std::size_t p = 0, i = 1;
    auto number = [&] {
        if (i >= stored.size() || stored[i] < '0' || stored[i] > '9') corrupt();
        std::size_t n = 0;
        while (i < stored.size() && stored[i] >= '0' && stored[i] <= '9') {
            n = n * 10 + static_cast<std::size_t>(stored[i++] - '0');
            if (n > content.size() + stored.size()) corrupt();
        }
        return n;
    };
    while (i < stored.size()) {
        const char op = stored[i++];
        if (op == '_') {
            if (p == content.size()) corrupt();
            out += ' ';
            ++p;
            continue;
        }
        const std::size_t n = number();
        if (op == 'c' || op == 's') {
            if (n > content.size() - p) corrupt();
            if (op == 'c') out.append(content.data() + p, n);
            p += n;
        } else if (op == 'i') {
            if (i >= stored.size() || stored[i] != ':' || n > stored.size() - i - 1) corrupt();
            out.append(stored.data() + i + 1, n);
            i += 1 + n;
        } else {
            corrupt();
        }
    }
    return out;
}

}  // namespace notesd::detail
