#include "store/migrations.hpp"

#include <algorithm>
#include <cctype>

namespace notesd {
namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0;
    std::size_t e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

// True when only blanks, a carriage return or a `--` comment follow position i on its line.
bool at_line_end(const std::string& s, std::size_t i) {
    for (++i; i < s.size() && s[i] != '\n'; ++i) {
        if (s[i] == '-' && i + 1 < s.size() && s[i + 1] == '-') return true;
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
    }
    return true;
}

// Length of a PostgreSQL dollar-quote tag ("$$" or "$tag$") starting at i, or 0.
std::size_t dollar_tag(const std::string& s, std::size_t i) {
    if (s[i] != '$') return 0;
    std::size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    return j < s.size() && s[j] == '$' ? j - i + 1 : 0;
}

}  // namespace

std::vector<EmbeddedMigration> migrations_for(const std::string& backend) {
    std::vector<EmbeddedMigration> out;
    for (const auto& m : embedded_migrations())
        if (backend == m.backend) out.push_back(m);
    std::stable_sort(out.begin(), out.end(), [](const EmbeddedMigration& a,
                                                 const EmbeddedMigration& b) {
        return a.version < b.version;
    });
    return out;
}

// Comments are dropped rather than passed on: SOCI's MySQL backend would read a ":word" in a
// comment as a placeholder. Quotes ('', "", `` and $tag$) are copied verbatim.
std::vector<std::string> split_sql(const std::string& script) {
    std::vector<std::string> out;
    std::string cur;
    const std::size_t n = script.size();
    for (std::size_t i = 0; i < n; ++i) {
        const char c = script[i];
        if (c == '-' && i + 1 < n && script[i + 1] == '-') {
            while (i < n && script[i] != '\n') ++i;
            cur += '\n';
        } else if (c == '/' && i + 1 < n && script[i + 1] == '*') {
            const std::size_t end = script.find("*/", i + 2);
            i = end == std::string::npos ? n : end + 1;
            cur += ' ';
        } else if (c == '\'' || c == '"' || c == '`') {
            std::size_t j = i + 1;
            // a doubled quote character inside the literal is an escaped quote
            while (j < n && !(script[j] == c && (j + 1 >= n || script[j + 1] != c)))
                j += script[j] == c ? 2 : 1;
            cur.append(script, i, std::min(j, n - 1) - i + 1);
            i = j;
        } else if (const std::size_t tag = dollar_tag(script, i)) {
            const std::string t = script.substr(i, tag);
            const std::size_t end = script.find(t, i + tag);
            const std::size_t stop = end == std::string::npos ? n : end + tag;
            cur.append(script, i, stop - i);
            i = stop - 1;
        } else if (c == ';' && at_line_end(script, i)) {
            std::string st = trim(cur);
            if (!st.empty()) out.push_back(std::move(st));
            cur.clear();
        } else {
            cur += c;
        }
    }
    std::string st = trim(cur);
    if (!st.empty()) out.push_back(std::move(st));
    return out;
}

}  // namespace notesd
