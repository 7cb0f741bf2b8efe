// Schema 019's data step (SociStore::encode_stored_plain_texts): the plain texts stored before
// it rewritten as edits of their content (plain_text_codec.hpp).
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/plain_text_codec.hpp"
#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"

namespace notesd {

using detail::exec;

namespace {

// The edits a row stored as the text itself is rewritten to; none when it is edits already or
// they would not be shorter.
std::optional<std::string> shorter_edits(const std::string& content, const std::string& plain) {
    if (detail::is_plain_text_edits(plain)) return std::nullopt;
    std::string s = detail::encode_plain_text(content, plain);
    if (s == plain) return std::nullopt;
    return s;
}

}  // namespace

// Schema 019: every stored plain text written before it (the text itself) as the edits of its
// note's content, a page of 1,000 rows at a time by key so memory stays bounded; a row that is
// edits already, or that the edits would not shorten, stays as it is.
void SociStore::encode_stored_plain_texts() {
    long long last = 0, lim = 1000, id = 0;
    std::string content, plain, stored;
    soci::statement page = detail::Prep(sql_, "SELECT t.note_id, n.content, t.plain_text FROM "
                                              "note_text t JOIN notes n ON n.id = t.note_id WHERE "
                                              "t.note_id > :last ORDER BY t.note_id" +
                                                  dialect_->limit_clause())
                               .out(id).out(content).out(plain).in(last, "last").in(lim, "lim")
                               .done();
    soci::statement update = detail::Prep(sql_, "UPDATE note_text SET plain_text = :p WHERE note_id = :id")
                                 .in(stored, "p").in(id, "id").done();
    for (long long seen = lim; seen == lim;) {
        std::vector<std::pair<long long, std::string>> changed;
        seen = 0;
        page.execute();
        while (page.fetch()) {
            ++seen;
            last = id;
            if (auto s = shorter_edits(content, plain)) changed.emplace_back(id, std::move(*s));
        }
        for (auto& [row, s] : changed) {
            id = row;
            stored = std::move(s);
            exec(update);
        }
    }
    // The trash: keyed by user and note id, with its own copy of the content.
    long long user = 0, last_user = 0;
    std::string uuid, last_uuid;
    soci::statement trash = detail::Prep(sql_, "SELECT user_id, uuid, content, plain_text FROM "
                                               "trashed_notes WHERE user_id > :lu OR (user_id = :lu2 "
                                               "AND uuid > :luuid) ORDER BY user_id, uuid" +
                                                   dialect_->limit_clause())
                                .out(user).out(uuid).out(content).out(plain)
                                .in(last_user, "lu").in(last_user, "lu2").in(last_uuid, "luuid")
                                .in(lim, "lim").done();
    soci::statement trash_update = detail::Prep(sql_, "UPDATE trashed_notes SET plain_text = :p "
                                                      "WHERE user_id = :u AND uuid = :uuid")
                                       .in(stored, "p").in(user, "u").in(uuid, "uuid").done();
    for (long long seen = lim; seen == lim;) {
        std::vector<std::tuple<long long, std::string, std::string>> changed;
        seen = 0;
        trash.execute();
        while (trash.fetch()) {
            ++seen;
            last_user = user;
            last_uuid = uuid;
            if (auto s = shorter_edits(content, plain)) changed.emplace_back(user, uuid, std::move(*s));
        }
        for (auto& [u, note, s] : changed) {
            user = u;
            uuid = note;
            stored = std::move(s);
            exec(trash_update);
        }
    }
}

}  // namespace notesd
