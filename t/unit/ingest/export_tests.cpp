// notesctl export against a real store while another connection writes: the export is one
// committed state of the user's data (export_user reads everything in one view).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "ingest/export.hpp"
#include "../store/store_fixture.hpp"

using namespace notesd;

namespace {

// The store's NoteReader, plus a write made through another connection right after the first
// page of notes is handed out: what an API client may do while an export walks the pages.
class WriteAfterFirstPage : public NoteReader {
public:
    WriteAfterFirstPage(Store& real, std::function<void()> write)
        : real_(real), write_(std::move(write)) {}
    long long count_notes(long long user_id, const NoteFilter& f) override {
        return real_.count_notes(user_id, f);
    }
    std::vector<NoteItem> list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                     const std::optional<PageKey>& after, int limit,
                                     bool with_content) override {
        std::vector<NoteItem> page = real_.list_notes(user_id, f, order, after, limit, with_content);
        if (write_) std::exchange(write_, nullptr)();
        return page;
    }
    long long count_collections(long long user_id, const CollectionFilter& f) override {
        return real_.count_collections(user_id, f);
    }
    std::vector<CollectionItem> list_collections(long long user_id, const CollectionFilter& f,
                                                 OrderBy order, const std::optional<PageKey>& after,
                                                 int limit) override {
        return real_.list_collections(user_id, f, order, after, limit);
    }

private:
    Store& real_;
    std::function<void()> write_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(export_while_writing)

// 600 notes are more than one page (500). The oldest note, due on the second page, is updated
// through another connection after the first page: it becomes the newest, before the cursor.
// Page by page the export would miss it; in one view it exports it once, as it was.
BOOST_FIXTURE_TEST_CASE(a_note_updated_during_the_walk_is_exported_once, test::StoreFixture) {
    const long long u = user("export");
    std::vector<NoteInput> notes;
    for (int i = 0; i < 600; ++i) {
        NoteInput n = test::plain_note("note " + std::to_string(i));
        n.created_us = n.updated_us = 1000 + i;
        notes.push_back(n);
    }
    store->write_batch(u, {}, notes);
    auto other = open_store(conn);
    NoteInput moved = notes.front();
    moved.content = "changed during the export";
    moved.updated_us = 5000;
    WriteAfterFirstPage reader(*store, [&] {
        const std::vector<WriteOutcome> out = other->write_batch(u, {}, {moved});
        BOOST_REQUIRE(out.at(0) == WriteOutcome::Updated);
    });
    const std::string path = (dir.empty() ? std::string("/tmp") : dir) + "/export-" + new_uuid() + ".jsonl";
    const ExportReport r = export_user(reader, *store, *store, *store, u, ExportFormat::Jsonl, path);
    BOOST_CHECK_EQUAL(r.notes, 600);
    std::ifstream in(path);
    std::string line;
    int lines = 0, moved_lines = 0;
    while (std::getline(in, line)) {
        ++lines;
        if (line.find(moved.id) != std::string::npos) {
            ++moved_lines;
            BOOST_CHECK(line.find("changed during the export") == std::string::npos);
        }
    }
    BOOST_CHECK_EQUAL(lines, 600);
    BOOST_CHECK_EQUAL(moved_lines, 1);
    std::filesystem::remove(path);
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 600);  // the update itself went through
}

BOOST_AUTO_TEST_SUITE_END()
