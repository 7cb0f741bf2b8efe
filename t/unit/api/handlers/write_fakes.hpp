// Fakes of the write API's store roles for the handlers' tests: NoteEditor and NoteTrash over a
// map of notes, NoteWriter's delete, and CollectionEditor over a map of collections. Each keeps
// the rules the store keeps (ids per user, versions, the trash) in the simplest way and records
// what the handler asked for; an outcome can be forced to reach the handler's error mapping.
#pragma once
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace notesd::test {

constexpr long long kWriter = 7;  ///< the user whose notes and collections the fakes hold

class FakeNotes : public NoteEditor, public NoteTrash, public NoteWriter, public ReadViews {
public:
    std::map<std::string, NoteRecord> notes;  // of kWriter, by id
    std::vector<std::pair<std::string, std::string>> titles;  // collection_titles' answer
    std::optional<NoteInput> last_input;      // of create_note / update_note
    long long last_expected_version = 0;
    std::optional<NoteWriteStatus> forced;    // the next write's outcome, when set
    int calls = 0;                            // store calls of any kind

    /// Read views begun, whether one is open, and for each find_note whether it ran in one.
    int views_begun = 0;
    bool in_view = false;
    std::vector<bool> finds_in_view;
    void begin_read() override {
        ++views_begun;
        in_view = true;
    }
    void end_read() noexcept override { in_view = false; }
    std::optional<NoteRecord> find_note(long long user_id, const std::string& id) override {
        ++calls;
        finds_in_view.push_back(in_view);
        auto it = notes.find(id);
        if (user_id != kWriter || it == notes.end()) return std::nullopt;
        return it->second;
    }
    std::vector<std::pair<std::string, std::string>> collection_titles(long long) override {
        ++calls;
        return titles;
    }
    NoteWriteResult create_note(long long, const NoteInput& n) override {
        ++calls;
        last_input = n;
        if (auto f = take_forced()) return {*f, {}};
        if (notes.count(n.id)) return {NoteWriteStatus::IdTaken, {}};
        return {NoteWriteStatus::Done, notes[n.id] = record_of(n, 1)};
    }
    NoteWriteResult update_note(long long, const NoteInput& n, long long expected) override {
        ++calls;
        last_input = n;
        last_expected_version = expected;
        auto it = notes.find(n.id);
        if (it == notes.end()) return {NoteWriteStatus::NotFound, {}};
        if (auto f = take_forced()) return {*f, it->second};
        if (it->second.trashed_us) return {NoteWriteStatus::Trashed, {}};
        if (it->second.version != expected) return {NoteWriteStatus::VersionConflict, it->second};
        NoteRecord r = record_of(n, expected + 1);
        r.created_us = it->second.created_us;
        r.collection_ids = it->second.collection_ids;
        it->second = r;
        return {NoteWriteStatus::Done, r};
    }
    NoteWriteResult set_note_created(long long, const std::string& id, long long created) override {
        ++calls;
        auto it = notes.find(id);
        if (it == notes.end()) return {NoteWriteStatus::NotFound, {}};
        if (it->second.trashed_us) return {NoteWriteStatus::Trashed, {}};
        if (created >= it->second.created_us) return {NoteWriteStatus::NotEarlier, it->second};
        it->second.created_us = created;
        return {NoteWriteStatus::Done, it->second};
    }
    bool trash_note(long long, const std::string& id, long long now_us) override {
        ++calls;
        auto it = notes.find(id);
        if (it == notes.end()) return false;
        if (!it->second.trashed_us) it->second.trashed_us = now_us;
        return true;
    }
    bool restore_note(long long, const std::string& id) override {
        ++calls;
        auto it = notes.find(id);
        if (it == notes.end()) return false;
        it->second.trashed_us.reset();
        return true;
    }
    std::vector<std::string> trashed_note_ids(long long) override {
        BOOST_ERROR("no handler lists the trash");
        return {};
    }
    bool delete_note(long long, const std::string& id) override {
        ++calls;
        return notes.erase(id) > 0;
    }
    std::vector<WriteOutcome> write_batch(long long, const std::vector<CollectionInput>&,
                                          const std::vector<NoteInput>&) override {
        BOOST_ERROR("no handler writes batches");
        return {};
    }

    static NoteRecord record_of(const NoteInput& n, long long version) {
        NoteRecord r;
        r.id = n.id;
        r.title = n.title;
        r.content = n.content;
        r.version = version;
        r.created_us = n.created_us;
        r.updated_us = n.updated_us;
        r.collection_ids = n.collection_ids;
        r.attachments = n.attachments;
        for (const Attachment& a : n.attachments)
            if (a.kind == AttachmentKind::Audio) r.audio_recording_ids.push_back(a.id);
        return r;
    }

private:
    std::optional<NoteWriteStatus> take_forced() {
        std::optional<NoteWriteStatus> f = forced;
        forced.reset();
        return f;
    }
};

class FakeCollections : public CollectionEditor {
public:
    std::map<std::string, CollectionItem> collections;  // of kWriter, by id
    std::optional<CollectionPatch> last_patch;
    std::optional<CollectionWrite> forced;  // the next link write's outcome, when set
    struct LinkCall {
        std::string op, collection, note, target;
    };
    std::vector<LinkCall> link_calls;
    int calls = 0;

    std::optional<CollectionItem> find_collection(long long user_id, const std::string& id) override {
        ++calls;
        auto it = collections.find(id);
        if (user_id != kWriter || it == collections.end()) return std::nullopt;
        return it->second;
    }
    CollectionWrite create_collection(long long, const CollectionInput& c) override {
        ++calls;
        if (collections.count(c.id)) return CollectionWrite::Conflict;
        collections[c.id] = CollectionItem{c.id, c.title, c.description, c.created_us, c.updated_us, 0};
        return CollectionWrite::Done;
    }
    CollectionWrite update_collection(long long, const std::string& id, const CollectionPatch& p,
                                      CollectionItem* out) override {
        ++calls;
        last_patch = p;
        auto it = collections.find(id);
        if (it == collections.end()) return CollectionWrite::NoCollection;
        if (p.updated_us < it->second.created_us) return CollectionWrite::UpdatedBeforeCreated;
        if (p.title) it->second.title = *p.title;
        if (p.description) it->second.description = *p.description;
        it->second.updated_us = p.updated_us;
        if (out) *out = it->second;
        return CollectionWrite::Done;
    }
    CollectionWrite delete_collection(long long, const std::string& id) override {
        ++calls;
        return collections.erase(id) ? CollectionWrite::Done : CollectionWrite::NoCollection;
    }
    CollectionWrite link_note(long long, const std::string& c, const std::string& n) override {
        return link_call({"link", c, n, ""});
    }
    CollectionWrite unlink_note(long long, const std::string& c, const std::string& n) override {
        return link_call({"unlink", c, n, ""});
    }
    CollectionWrite move_note(long long, const std::string& s, const std::string& n,
                              const std::string& t) override {
        return link_call({"move", s, n, t});
    }

private:
    CollectionWrite link_call(LinkCall c) {
        ++calls;
        link_calls.push_back(std::move(c));
        std::optional<CollectionWrite> f = forced;
        forced.reset();
        if (f) return *f;
        return collections.count(link_calls.back().collection) ? CollectionWrite::Done
                                                               : CollectionWrite::NoCollection;
    }
};

}  // namespace notesd::test
