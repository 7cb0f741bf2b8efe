// The store suite, continued: the write API's roles on every backend of the run. NoteEditor and
// NoteTrash (create, read, update under a version, trash, restore, created_at), delete of
// trashed notes, the version a re-import bumps, token scopes, CollectionEditor (links and
// counts), and check_user, which must find each kind of damage.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>

#include <soci/soci.h>

#include "store/segments.hpp"
#include "store/store.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;
using notesd::test::StoreFixture;

namespace {

struct NotesFixture : StoreFixture {
    long long total(long long u) { return store->count_notes(u, NoteFilter{}); }
    long long df(long long u, const std::string& term) { return store->term_dfs(u, {term})[0]; }
    long long collection_count(long long u, const std::string& id) {
        for (const CollectionItem& c :
             store->list_collections(u, CollectionFilter{}, OrderBy::UpdatedAt, std::nullopt, 100))
            if (c.id == id) return c.note_count;
        return -1;
    }
    void consistent(long long u) {
        const std::vector<std::string> problems = store->check_user(u);
        for (const std::string& p : problems) BOOST_ERROR("check_user: " << p);
    }
};

// A note whose title and plain text are the given words (the store analyses them).
NoteInput note(const std::string& id, const std::string& title, const std::string& body,
               long long created, long long updated, std::vector<std::string> colls = {}) {
    NoteInput n;
    n.id = id;
    n.title = title;
    n.snippet = body;
    n.content = "# " + title + "\n\n" + body;
    n.created_us = created;
    n.updated_us = updated;
    n.collection_ids = std::move(colls);
    n.plain_text = body;
    n.attachments.push_back(Attachment{stable_uuid("att:" + id), AttachmentKind::Image, "a b.png"});
    n.attachments.push_back(Attachment{stable_uuid("aud:" + id), AttachmentKind::Audio, "x:1:2.m4a"});
    return n;
}

CollectionInput collection(const std::string& id, const std::string& title, long long t = 1000) {
    CollectionInput c;
    c.id = id;
    c.title = title;
    c.created_us = c.updated_us = t;
    return c;
}

std::vector<std::string> ids_of(const std::vector<NoteItem>& v) {
    std::vector<std::string> out;
    for (const NoteItem& n : v) out.push_back(n.id);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(store)

BOOST_FIXTURE_TEST_CASE(note_editor_create_read_update, NotesFixture) {
    const long long u = user("editor");
    const std::string box = new_uuid();
    store->write_batch(u, {collection(box, "Box")}, {});
    const std::string id = new_uuid();
    NoteWriteResult r = store->create_note(u, note(id, "alpha", "beta gamma", 100, 200, {box, new_uuid()}));
    BOOST_REQUIRE(r.status == NoteWriteStatus::Done);
    BOOST_CHECK_EQUAL(r.note.version, 1);
    BOOST_CHECK(r.note.collection_ids == std::vector<std::string>{box});  // the unknown one is left out
    BOOST_CHECK_EQUAL(total(u), 1);
    BOOST_CHECK_EQUAL(collection_count(u, box), 1);
    BOOST_CHECK_EQUAL(df(u, "gamma"), 1);
    std::optional<NoteRecord> got = store->find_note(u, id);
    BOOST_REQUIRE(got);
    BOOST_CHECK_EQUAL(got->content, "# alpha\n\nbeta gamma");
    BOOST_CHECK(!got->trashed_us);
    BOOST_REQUIRE_EQUAL(got->attachments.size(), 2u);
    BOOST_CHECK_EQUAL(got->attachments[1].target, "x:1:2.m4a");
    BOOST_CHECK(got->audio_recording_ids == std::vector<std::string>{got->attachments[1].id});
    consistent(u);

    BOOST_CHECK(store->create_note(u, note(id, "x", "y", 1, 1)).status == NoteWriteStatus::IdTaken);
    // another user may hold the same id
    const long long other = user("other");
    BOOST_CHECK(store->create_note(other, note(id, "x", "y", 1, 1)).status == NoteWriteStatus::Done);
    BOOST_CHECK(store->find_note(other, id)->title == "x");

    r = store->update_note(u, note(id, "delta", "epsilon", 999, 300), 1);
    BOOST_REQUIRE(r.status == NoteWriteStatus::Done);
    BOOST_CHECK_EQUAL(r.note.version, 2);
    BOOST_CHECK_EQUAL(r.note.created_us, 100);  // kept, whatever the input says
    BOOST_CHECK(r.note.collection_ids == std::vector<std::string>{box});  // links kept
    BOOST_CHECK_EQUAL(df(u, "gamma"), 0);
    BOOST_CHECK_EQUAL(df(u, "epsilon"), 1);
    BOOST_CHECK_EQUAL(total(u), 1);
    BOOST_CHECK_EQUAL(collection_count(u, box), 1);
    r = store->update_note(u, note(id, "zeta", "eta", 1, 400), 1);
    BOOST_CHECK(r.status == NoteWriteStatus::VersionConflict);
    BOOST_CHECK_EQUAL(r.note.version, 2);
    BOOST_CHECK_EQUAL(store->find_note(u, id)->title, "delta");
    BOOST_CHECK(store->update_note(u, note(id, "zeta", "eta", 1, 50), 2).status ==
                NoteWriteStatus::UpdatedBeforeCreated);
    BOOST_CHECK(store->update_note(u, note(new_uuid(), "a", "b", 1, 400), 1).status ==
                NoteWriteStatus::NotFound);
    BOOST_CHECK(store->update_note(other, note(id, "a", "b", 1, 400), 2).status ==
                NoteWriteStatus::VersionConflict);  // the other user's own note, version 1
    consistent(u);
    consistent(other);
}

BOOST_FIXTURE_TEST_CASE(note_editor_trash_restore_delete, NotesFixture) {
    const long long u = user("trash");
    const std::string box = new_uuid();
    store->write_batch(u, {collection(box, "Box")}, {});
    const std::string id = new_uuid();
    BOOST_REQUIRE(store->create_note(u, note(id, "alpha", "beta", 100, 200, {box})).status ==
                  NoteWriteStatus::Done);
    BOOST_REQUIRE(store->update_note(u, note(id, "alpha", "beta gamma", 0, 300), 1).status ==
                  NoteWriteStatus::Done);
    BOOST_CHECK(store->trash_note(u, id, 5000));
    BOOST_CHECK(store->trash_note(u, id, 6000));  // again: no change
    BOOST_CHECK_EQUAL(total(u), 0);
    BOOST_CHECK_EQUAL(collection_count(u, box), 0);
    BOOST_CHECK_EQUAL(df(u, "alpha"), 0);
    BOOST_CHECK(store->list_notes(u, NoteFilter{}, OrderBy::UpdatedAt, std::nullopt, 10, false).empty());
    std::optional<NoteRecord> t = store->find_note(u, id);
    BOOST_REQUIRE(t);
    BOOST_CHECK_EQUAL(*t->trashed_us, 5000);
    BOOST_CHECK_EQUAL(t->version, 2);
    BOOST_CHECK(t->collection_ids == std::vector<std::string>{box});
    BOOST_CHECK_EQUAL(t->attachments.size(), 2u);
    consistent(u);
    BOOST_CHECK(store->update_note(u, note(id, "a", "b", 1, 400), 2).status == NoteWriteStatus::Trashed);
    BOOST_CHECK(store->set_note_created(u, id, 1).status == NoteWriteStatus::Trashed);
    BOOST_CHECK(store->create_note(u, note(id, "a", "b", 1, 1)).status == NoteWriteStatus::IdTaken);
    // a re-import leaves the trashed note where it is
    std::vector<WriteOutcome> out = store->write_batch(u, {}, {note(id, "imported", "text", 1, 1)});
    BOOST_CHECK(out[0] == WriteOutcome::Unchanged);
    BOOST_CHECK_EQUAL(total(u), 0);

    BOOST_CHECK(store->restore_note(u, id));
    BOOST_CHECK(store->restore_note(u, id));  // again: no change
    BOOST_CHECK_EQUAL(total(u), 1);
    BOOST_CHECK_EQUAL(collection_count(u, box), 1);
    BOOST_CHECK_EQUAL(df(u, "gamma"), 1);
    std::optional<NoteRecord> back = store->find_note(u, id);
    BOOST_REQUIRE(back);
    BOOST_CHECK(!back->trashed_us);
    BOOST_CHECK_EQUAL(back->version, 2);
    BOOST_CHECK_EQUAL(back->content, "# alpha\n\nbeta gamma");
    BOOST_CHECK(back->attachments.size() == 2 && back->attachments[0].id == t->attachments[0].id);
    consistent(u);

    // delete works on a trashed note, and its id is free again
    BOOST_CHECK(store->trash_note(u, id, 7000));
    BOOST_CHECK(!store->trash_note(u, new_uuid(), 7000));
    BOOST_CHECK(!store->restore_note(u, new_uuid()));
    BOOST_CHECK(store->delete_note(u, id));  // deletes the trashed note
    BOOST_CHECK(!store->find_note(u, id));
    BOOST_CHECK(!store->delete_note(u, id));
    BOOST_CHECK(store->create_note(u, note(id, "new", "life", 1, 1)).status == NoteWriteStatus::Done);
    consistent(u);
}

BOOST_FIXTURE_TEST_CASE(note_editor_created_at_and_import_versions, NotesFixture) {
    const long long u = user("dates");
    const std::string id = new_uuid();
    BOOST_REQUIRE(store->create_note(u, note(id, "alpha", "beta", 100, 200)).status ==
                  NoteWriteStatus::Done);
    BOOST_CHECK(store->set_note_created(u, id, 100).status == NoteWriteStatus::NotEarlier);
    BOOST_CHECK(store->set_note_created(u, id, 150).status == NoteWriteStatus::NotEarlier);
    NoteWriteResult r = store->set_note_created(u, id, 50);
    BOOST_REQUIRE(r.status == NoteWriteStatus::Done);
    BOOST_CHECK_EQUAL(r.note.created_us, 50);
    BOOST_CHECK_EQUAL(r.note.updated_us, 200);
    BOOST_CHECK_EQUAL(r.note.version, 1);
    NoteFilter early;
    early.created.max_us = 60;
    BOOST_CHECK_EQUAL(store->count_notes(u, early), 1);
    BOOST_CHECK(store->set_note_created(u, new_uuid(), 1).status == NoteWriteStatus::NotFound);
    consistent(u);
    // a re-import that changes the note is a content update; an unchanged one is not
    const std::string imported = new_uuid();
    store->write_batch(u, {}, {note(imported, "one", "two", 1, 2)});
    store->write_batch(u, {}, {note(imported, "one", "two", 1, 2)});
    BOOST_CHECK_EQUAL(store->find_note(u, imported)->version, 1);
    store->write_batch(u, {}, {note(imported, "one", "three", 1, 3)});
    BOOST_CHECK_EQUAL(store->find_note(u, imported)->version, 2);
    consistent(u);
}

BOOST_FIXTURE_TEST_CASE(token_scopes, NotesFixture) {
    const long long u = user("scoped");
    const std::string ro = sha256_hex("read-only " + new_uuid());
    const std::string rw = sha256_hex("read-write " + new_uuid());
    store->add_token(u, ro, "p1", "", 1, TokenScope::ReadOnly);
    store->add_token(u, rw, "p2", "", 1, TokenScope::ReadWrite);
    BOOST_CHECK(store->find_token(ro)->scope == TokenScope::ReadOnly);
    BOOST_CHECK(store->find_token(rw)->scope == TokenScope::ReadWrite);
    const std::vector<TokenInfo> tokens = store->list_tokens(u);
    BOOST_REQUIRE_EQUAL(tokens.size(), 2u);
    BOOST_CHECK(tokens[0].scope == TokenScope::ReadOnly);
    BOOST_CHECK(tokens[1].scope == TokenScope::ReadWrite);
}

// CollectionEditor: every write keeps note_count, the collection total, the note's collection
// list, collection pages and the search's collection filter in step.
BOOST_FIXTURE_TEST_CASE(collection_writes_keep_links_and_counts, NotesFixture) {
    CollectionEditor& colls = *store;
    const long long u = user("cw");
    const long long other = user("cw-other");
    const std::string a = new_uuid(), b = new_uuid(), n1 = new_uuid(), n2 = new_uuid();
    CollectionInput ca = collection(a, "A", 100);
    ca.description = "first";
    BOOST_CHECK(colls.create_collection(u, ca) == CollectionWrite::Done);
    BOOST_CHECK(colls.create_collection(u, ca) == CollectionWrite::Conflict);
    BOOST_CHECK(colls.create_collection(u, collection(b, "B", 100)) == CollectionWrite::Done);
    BOOST_CHECK(colls.create_collection(other, ca) == CollectionWrite::Done);  // ids are per user
    const NoteInput one = note(n1, "alpha", "one", 10, 20, {a});
    store->write_batch(u, {}, {one, note(n2, "alpha", "two", 10, 30)});
    auto count = [&](const std::string& c) { return colls.find_collection(u, c)->note_count; };
    auto list_of = [&](const std::string& n) {
        for (const NoteItem& i : store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 10, false))
            if (i.id == n) return i.collection_ids;
        return std::vector<std::string>{"missing"};
    };
    auto found = [&](const std::string& c) {
        SearchFilter f;
        f.collection_ids = {c};
        std::set<std::string> ids;
        for (const TermPosting& p : store->term_postings(u, "alpha", f, 10))
            ids.insert(uuid_from_halves(p.uid_hi, p.uid_lo));
        return ids;
    };
    auto in_list = [&](const std::string& c) {
        NoteFilter f;
        f.collection_id = c;
        return std::make_pair(store->count_notes(u, f),
                              ids_of(store->list_notes(u, f, OrderBy::UpdatedAt, std::nullopt, 10, false)));
    };
    BOOST_CHECK_EQUAL(count(a), 1);
    BOOST_CHECK(colls.link_note(u, a, n2) == CollectionWrite::Done);
    BOOST_CHECK(colls.link_note(u, a, n2) == CollectionWrite::Done);  // twice: one link
    BOOST_CHECK_EQUAL(count(a), 2);
    BOOST_CHECK(list_of(n2) == std::vector<std::string>{a});
    BOOST_CHECK((found(a) == std::set<std::string>{n1, n2}));
    BOOST_CHECK((in_list(a) == std::make_pair(2LL, std::vector<std::string>{n2, n1})));
    // a link changes no sort key: the note keeps its updated_at
    BOOST_CHECK_EQUAL(store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 1, false)[0].updated_us, 30);
    consistent(u);

    BOOST_CHECK(colls.move_note(u, a, n1, b) == CollectionWrite::Done);
    BOOST_CHECK_EQUAL(count(a), 1);
    BOOST_CHECK_EQUAL(count(b), 1);
    BOOST_CHECK(list_of(n1) == std::vector<std::string>{b});
    BOOST_CHECK((found(b) == std::set<std::string>{n1}));
    BOOST_CHECK(colls.move_note(u, a, n1, b) == CollectionWrite::NotLinked);
    BOOST_CHECK(colls.move_note(u, b, n1, b) == CollectionWrite::Done);
    BOOST_CHECK(colls.move_note(u, b, new_uuid(), a) == CollectionWrite::NoNote);
    BOOST_CHECK(colls.move_note(u, new_uuid(), n1, a) == CollectionWrite::NoCollection);
    BOOST_CHECK(colls.move_note(u, new_uuid(), n1, new_uuid()) == CollectionWrite::NoCollection);
    BOOST_CHECK(colls.move_note(u, b, n1, new_uuid()) == CollectionWrite::NoTarget);
    BOOST_CHECK(colls.link_note(other, a, n1) == CollectionWrite::NoNote);  // another user's note
    BOOST_CHECK(colls.link_note(u, new_uuid(), n1) == CollectionWrite::NoCollection);
    BOOST_CHECK_EQUAL(count(b), 1);

    BOOST_CHECK(colls.unlink_note(u, a, n2) == CollectionWrite::Done);
    BOOST_CHECK(colls.unlink_note(u, a, n2) == CollectionWrite::Done);
    BOOST_CHECK_EQUAL(count(a), 0);
    BOOST_CHECK(list_of(n2).empty());
    BOOST_CHECK(found(a).empty());

    CollectionPatch p;
    p.description = std::optional<std::string>();
    p.updated_us = 99;
    CollectionItem out;
    BOOST_CHECK(colls.update_collection(u, a, p, &out) == CollectionWrite::UpdatedBeforeCreated);
    p.updated_us = 500;
    p.title = "A2";
    BOOST_CHECK(colls.update_collection(u, a, p, &out) == CollectionWrite::Done);
    BOOST_CHECK(!out.description);
    BOOST_CHECK_EQUAL(out.title, "A2");
    BOOST_CHECK_EQUAL(colls.find_collection(other, a)->title, "A");  // the other user's own

    // a deleted collection leaves the lists of live and trashed notes; its notes stay
    BOOST_CHECK(colls.link_note(u, b, n2) == CollectionWrite::Done);
    BOOST_CHECK(store->trash_note(u, n2, 1000));
    BOOST_CHECK_EQUAL(store->count_collections(u, {}), 2);
    BOOST_CHECK(colls.delete_collection(u, b) == CollectionWrite::Done);
    BOOST_CHECK(colls.delete_collection(u, b) == CollectionWrite::NoCollection);
    BOOST_CHECK(!colls.find_collection(u, b));
    BOOST_CHECK_EQUAL(store->count_collections(u, {}), 1);
    BOOST_CHECK(list_of(n1).empty());
    BOOST_CHECK(found(b).empty());
    BOOST_CHECK(store->find_note(u, n2)->collection_ids.empty());
    BOOST_CHECK(store->restore_note(u, n2));
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 2);
    consistent(u);
    // a re-import of the note's unchanged source restores its link (the import hash was cleared)
    BOOST_CHECK(store->write_batch(u, {}, {one})[0] == WriteOutcome::Updated);
    BOOST_CHECK(list_of(n1) == std::vector<std::string>{a});
    BOOST_CHECK_EQUAL(count(a), 1);
    consistent(u);
}

// check_user is the crash tests' judge: each kind of damage, made behind the store's back,
// is reported, and a consistent user gives no line.
BOOST_FIXTURE_TEST_CASE(check_user_finds_damage, NotesFixture) {
    const long long u = user("damage");
    const std::string box = new_uuid();
    std::vector<NoteInput> notes;
    // 'word' often enough in each note that a segment keeps its blocks as rows of their own, not
    // in a term group (index/segment_pack.hpp): the damage below renames them.
    std::string words = " ";
    for (int k = 0; k < 40; ++k) words += "word ";
    for (int i = 0; i < 80; ++i)
        notes.push_back(note(new_uuid(), "common", "shared" + words + std::to_string(i), 10 + i, 100 + i, {box}));
    // batches below detail::kSegmentMinNotes: postings rows, not a segment
    const std::size_t half = notes.size() / 2;
    static_assert(40 < notesd::detail::kSegmentMinNotes);
    store->write_batch(u, {collection(box, "Box")}, {notes.begin(), notes.begin() + half});
    store->write_batch(u, {}, {notes.begin() + half, notes.end()});
    store->pack_postings(u);  // SQLite: "common" and "shared" in blocks
    BOOST_CHECK(store->check_user(u).empty());
    auto db = raw();
    auto damaged = [&](const std::string& damage, const std::string& undo, const std::string& expect) {
        *db << damage;
        const std::vector<std::string> problems = store->check_user(u);
        std::string all;
        for (const std::string& p : problems) all += p + "\n";
        BOOST_CHECK_MESSAGE(all.find(expect) != std::string::npos,
                            damage << ": expected '" << expect << "' in:\n" << all);
        *db << undo;
        BOOST_CHECK_MESSAGE(store->check_user(u).empty(), undo << " left differences");
    };
    const std::string user_is = " WHERE id = " + std::to_string(u);
    damaged("UPDATE users SET note_count = note_count + 1" + user_is,
            "UPDATE users SET note_count = note_count - 1" + user_is, "users.note_count");
    damaged("UPDATE users SET body_tokens = body_tokens + 3" + user_is,
            "UPDATE users SET body_tokens = body_tokens - 3" + user_is, "users.body_tokens");
    damaged("UPDATE collections SET note_count = note_count + 1 WHERE uuid = '" + box + "'",
            "UPDATE collections SET note_count = note_count - 1 WHERE uuid = '" + box + "'",
            "collections.note_count of " + box);
    const std::string term_is = " WHERE user_id = " + std::to_string(u) + " AND term = 'word'";
    damaged("UPDATE term_df SET df = df + 1" + term_is, "UPDATE term_df SET df = df - 1" + term_is,
            "term_df of 'word'");
    damaged("UPDATE postings SET tfs = tfs + 1" + term_is, "UPDATE postings SET tfs = tfs - 1" + term_is,
            "postings of term 'word'");
    if (sqlite()) {
        // A block that no longer reads as its rows (the rows changed, the block stayed).
        const std::string rows_of = " WHERE user_id = " + std::to_string(u) + " AND term = 'common'";
        damaged("UPDATE postings SET tfs = tfs + 1" + rows_of, "UPDATE postings SET tfs = tfs - 1" + rows_of,
                "packed postings of term 'common'");
    }
    // The same notes in a segment: a block under another term, a wrong live count, and the
    // postings both in rows and in a segment.
    const IndexCompaction c = store->compact_index(u);
    BOOST_CHECK_EQUAL(c.folded_notes, 80);
    BOOST_CHECK_EQUAL(c.segments, 1);
    BOOST_CHECK(store->check_user(u).empty());
    const std::string blocks_of = " WHERE user_id = " + std::to_string(u);
    damaged("UPDATE segment_blocks SET term = 'wordz'" + blocks_of + " AND term = 'word'",
            "UPDATE segment_blocks SET term = 'word'" + blocks_of + " AND term = 'wordz'",
            "postings of term 'word'");
    damaged("UPDATE index_segments SET live_count = live_count + 1" + blocks_of,
            "UPDATE index_segments SET live_count = live_count - 1" + blocks_of, "live count");
    damaged("INSERT INTO postings (user_id, term, updated_us, uid_hi, uid_lo, note_id, created_us, "
            "flags, tfs, lens, pos) SELECT n.user_id, 'shared', n.updated_us, 0, 0, n.id, n.created_us, "
            "n.flags, 1, 1, '' FROM notes n WHERE n.user_id = " + std::to_string(u) +
            " AND n.title = 'common' AND n.created_us = 10",
            "DELETE FROM postings WHERE user_id = " + std::to_string(u), "postings of term 'shared'");
}

BOOST_AUTO_TEST_SUITE_END()
