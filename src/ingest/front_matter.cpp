#include "ingest/front_matter.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "base/util.hpp"

namespace notesd {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// ---- front matter: a careful parser for the small YAML subset notes use ----

bool is_list_item(std::string_view t) { return t == "-" || t.substr(0, 2) == "- "; }

// A scalar: "double" (\" \\ \n \t escapes), 'single' ('' escape) or plain (# comment dropped).
bool parse_scalar(std::string_view raw, std::string& out, std::string& err) {
    raw = trim(raw);
    out.clear();
    if (!raw.empty() && (raw.front() == '"' || raw.front() == '\'')) {
        char q = raw.front();
        std::size_t i = 1;
        for (; i < raw.size(); ++i) {
            char c = raw[i];
            if (q == '\'' && c == '\'') {
                if (i + 1 < raw.size() && raw[i + 1] == '\'') { out += '\''; ++i; continue; }
                break;
            }
            if (q == '"' && c == '"') break;
            if (q == '"' && c == '\\' && i + 1 < raw.size()) {
                char e = raw[++i];
                const char* map = "\"\"\\\\//n\nt\tr\r";
                const char* hit = std::strchr(map, e);
                if (!hit || (hit - map) % 2 != 0) { err = "unsupported escape in quoted string"; return false; }
                out += hit[1];
                continue;
            }
            out += c;
        }
        if (i >= raw.size()) { err = "unterminated quoted string"; return false; }
        std::string_view rest = trim(raw.substr(i + 1));
        if (!rest.empty() && rest.front() != '#') { err = "text after a quoted string"; return false; }
        return true;
    }
    std::size_t hash = raw.find(" #");
    out = std::string(trim(raw.substr(0, hash)));
    if (out == "~" || out == "null" || out == "Null" || out == "NULL") out.clear();
    return true;
}

// [a, "b, c", 'd'] -> items; nested flow collections are not part of the subset.
bool parse_inline_list(std::string_view raw, std::vector<std::string>& out, std::string& err) {
    std::size_t close = raw.rfind(']');
    std::string_view after = close == std::string_view::npos ? raw : trim(raw.substr(close + 1));
    if (close == std::string_view::npos || (!after.empty() && after.front() != '#')) {
        err = "unterminated [list]";
        return false;
    }
    std::string_view inner = raw.substr(1, close - 1);
    std::size_t start = 0;
    char quote = 0;
    for (std::size_t i = 0; i <= inner.size(); ++i) {
        char c = i < inner.size() ? inner[i] : ',';
        if (quote) { if (c == quote) quote = 0; continue; }
        if (c == '"' || c == '\'') { quote = c; continue; }
        if (c == '[' || c == '{') { err = "nested lists are not supported"; return false; }
        if (c != ',') continue;
        std::string item;
        if (!parse_scalar(inner.substr(start, i - start), item, err)) return false;
        if (!item.empty()) out.push_back(item);
        start = i + 1;
    }
    if (quote) { err = "unterminated quoted string"; return false; }
    return true;
}

// One key's value: an inline scalar or list, a block list, or a folded plain scalar.
bool parse_value(std::string_view raw, const std::vector<std::string_view>& cont,
                 std::vector<std::string>& values, bool& is_list, std::string& err) {
    raw = trim(raw);
    is_list = false;
    if (!raw.empty() && (raw.front() == '|' || raw.front() == '>' || raw.front() == '{' ||
                         raw.front() == '&' || raw.front() == '*' || raw.front() == '!')) {
        err = "block scalars, maps, anchors and tags are not supported";
        return false;
    }
    if (!raw.empty() && raw.front() == '[') {
        is_list = true;
        return cont.empty() ? parse_inline_list(raw, values, err)
                            : (err = "unexpected indented lines after a [list]", false);
    }
    std::string item;
    if (raw.empty() && !cont.empty()) {
        is_list = true;
        for (std::string_view line : cont) {
            std::string_view t = trim(line);
            if (!is_list_item(t)) { err = "mixed list items and text"; return false; }
            if (!parse_scalar(t.substr(1), item, err)) return false;
            if (!item.empty()) values.push_back(item);
        }
        return true;
    }
    std::string joined(raw);  // a plain scalar may continue on indented lines (folded)
    for (std::string_view line : cont) {
        if (is_list_item(trim(line))) { err = "a list item after a value"; return false; }
        joined += ' ';
        joined += trim(line);
    }
    if (!parse_scalar(joined, item, err)) return false;
    if (!item.empty()) values.push_back(item);
    return true;
}

bool apply_key(FrontMatter& fm, const std::string& key, const std::vector<std::string>& values,
               bool is_list, std::string& err) {
    if (key == "collections") {
        for (const std::string& v : values) {
            std::string name(trim(v));
            while (!name.empty() && name.back() == '/') name.pop_back();
            while (!name.empty() && name.front() == '/') name.erase(0, 1);
            if (!name.empty()) fm.collections.push_back(name);
        }
        return true;
    }
    if (is_list) { err = key + " must be a single value, not a list"; return false; }
    if (values.empty()) return true;  // "title:" with no value: as if absent
    const std::string& v = values.front();
    if (key == "title") {
        fm.title = v;
    } else if (key == "id") {
        fm.id = parse_uuid(v);
        if (!fm.id) { err = "id is not a UUID"; return false; }
    } else {
        std::optional<long long> t = parse_import_time(v);
        if (!t) { err = key + " is not a date or date-time"; return false; }
        (key == "trashed_at" ? fm.trashed_us : key[0] == 'c' ? fm.created_us : fm.updated_us) = t;
    }
    return true;
}

bool parse_front_matter(const std::vector<std::string_view>& lines, FrontMatter& fm,
                        std::string& err) {
    static const std::set<std::string> kKnown = {"title", "id", "created", "created_at",
                                                 "updated", "updated_at", "collections",
                                                 "trashed_at"};
    std::set<std::string> seen;
    auto blank = [](std::string_view l) { return trim(l).empty() || trim(l).front() == '#'; };
    auto continues = [](std::string_view l) {
        return !l.empty() && (l.front() == ' ' || l.front() == '\t' || is_list_item(trim(l)));
    };
    for (std::size_t i = 0; i < lines.size();) {
        std::string_view line = lines[i];
        std::string where = "line " + std::to_string(i + 2) + ": ";  // +1 for the opening ---
        if (blank(line)) { ++i; continue; }
        std::size_t colon = line.find(':');
        std::string key(colon == std::string_view::npos ? line : line.substr(0, colon));
        bool key_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        });
        if (colon == std::string_view::npos || !key_ok) {
            err = where + "expected 'key: value'";
            return false;
        }
        std::vector<std::string_view> cont;
        std::size_t j = ++i;
        while (j < lines.size() && (blank(lines[j]) || continues(lines[j]))) {
            if (!blank(lines[j])) { cont.push_back(lines[j]); i = j + 1; }
            ++j;
        }
        std::string canonical = key == "created_at" ? "created" : key == "updated_at" ? "updated" : key;
        if (!seen.insert(canonical).second) { err = where + "duplicate key '" + key + "'"; return false; }
        if (!kKnown.count(key)) continue;  // unknown keys (tags, aliases, ...) are ignored
        std::vector<std::string> values;
        bool is_list = false;
        if (!parse_value(line.substr(colon + 1), cont, values, is_list, err) ||
            !apply_key(fm, canonical, values, is_list, err)) {
            err = where + err;
            return false;
        }
    }
    return true;
}

}  // namespace

std::string split_front_matter(std::string_view text, FrontMatter& fm, std::string& error) {
    auto line_end = [&](std::size_t from) {
        std::size_t nl = text.find('\n', from);
        return nl == std::string_view::npos ? text.size() : nl;
    };
    std::size_t first_end = line_end(0);
    if (trim(text.substr(0, first_end)) != "---" || text.substr(0, 3) != "---") return std::string(text);
    std::vector<std::string_view> lines;
    for (std::size_t pos = first_end + 1; pos <= text.size();) {
        std::size_t end = line_end(pos);
        std::string_view line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line) == "---" || trim(line) == "...") {
            if (!parse_front_matter(lines, fm, error)) return std::string();
            return std::string(text.substr(std::min(end + 1, text.size())));
        }
        lines.push_back(line);
        pos = end + 1;
    }
    error = "not closed (no line '---' after the opening one)";
    return std::string();
}

std::optional<long long> parse_import_time(std::string_view s) {
    s = trim(s);
    if (auto t = parse_time(s)) return t;
    std::string t(s);
    if (t.size() == 10) t += "T00:00:00Z";                         // YYYY-MM-DD
    else if (t.size() > 10 && (t[10] == ' ' || t[10] == 'T')) {
        t[10] = 'T';
        if (auto with_offset = parse_time(t)) return with_offset;  // space instead of T
        t += t.size() == 16 ? ":00Z" : "Z";                        // no offset: UTC
    }
    return parse_time(t);
}

}  // namespace notesd
