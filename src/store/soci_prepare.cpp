// The write path's input checks and analysis (soci_write.cpp's prepare step): each note of a
// write validated, its terms derived and its content hash computed before any transaction.
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>
#include <utility>

#include "index/note_index.hpp"
#include "store/index_strategy.hpp"
#include "store/plain_text_codec.hpp"
#include "store/soci_stmt.hpp"
#include "base/util.hpp"

namespace notesd::detail {

std::string canonical(const std::string& uuid, const char* what) {
    const std::optional<std::string> id = parse_uuid(uuid);
    if (!id) throw std::invalid_argument(std::string("invalid ") + what + " id");
    return *id;
}

void need_utf8(const std::string& s, const char* what) {
    if (!valid_utf8(s)) throw std::invalid_argument(std::string(what) + " is not valid UTF-8");
}

namespace {

// Batches of at least this many notes are analysed on several threads.
constexpr std::size_t kParallelPrepareNotes = 64;

// Length-prefixed fields, so no two different notes serialise alike.
void field(std::string& s, const std::string& v) {
    s += std::to_string(v.size());
    s += ':';
    s += v;
}

}  // namespace

AnalysedNote analyse_note(const std::string& title, const std::string& plain_text) {
    need_utf8(title, "note title");
    need_utf8(plain_text, "note plain text");
    AnalysedNote a;
    a.title = title;
    a.plain_text = plain_text;
    a.text = note_terms(title, plain_text);
    a.terms = count_terms(a.text.title_terms, a.text.body_terms);
    return a;
}

NoteWrite prepare_note(const NoteInput& n, std::optional<AnalysedNote> analysed) {
    NoteWrite note;
    note.in = &n;
    note.id = canonical(n.id, "note");
    need_utf8(n.title, "note title");
    need_utf8(n.snippet, "note snippet");
    need_utf8(n.content, "note content");
    for (const std::string& c : n.collection_ids) {
        std::string id = canonical(c, "collection");
        if (std::find(note.collections.begin(), note.collections.end(), id) == note.collections.end())
            note.collections.push_back(std::move(id));
    }
    std::vector<std::string> audio;
    for (const Attachment& a : n.attachments) {
        note.attachment_ids.push_back(canonical(a.id, "attachment"));
        need_utf8(a.target, "attachment target");
        if (a.kind == AttachmentKind::Audio) audio.push_back(note.attachment_ids.back());
    }
    note.collections_text = join_list(note.collections, ',');
    note.audio_text = join_list(audio, ',');
    uuid_halves(note.id, note.hi, note.lo);
    if (!analysed || analysed->title != n.title || analysed->plain_text != n.plain_text)
        analysed = analyse_note(n.title, n.plain_text);
    note.terms = std::move(analysed->terms);
    note.title_len = analysed->text.title_len;
    note.body_len = analysed->text.body_len;
    std::string s = "notesd-note-v2|";
    field(s, n.title);
    field(s, n.snippet);
    field(s, n.content);
    field(s, std::to_string(n.created_us));
    field(s, std::to_string(n.updated_us));
    field(s, std::to_string(n.flags));
    field(s, note.collections_text);
    for (std::size_t i = 0; i < n.attachments.size(); ++i) {
        field(s, note.attachment_ids[i]);
        field(s, attachment_kind_name(n.attachments[i].kind));
        field(s, n.attachments[i].target);
    }
    // The index fields count too: a note analysed differently (another version's analysis) is
    // an update.
    field(s, analysed->text.title_terms);
    field(s, analysed->text.body_terms);
    field(s, std::to_string(analysed->text.title_len));
    field(s, std::to_string(analysed->text.body_len));
    field(s, n.plain_text);
    note.hash = sha256_hex(s);
    note.stored_plain_text = encode_plain_text(n.content, n.plain_text);
    return note;
}

unsigned bulk_threads() { return std::min(4u, std::max(1u, std::thread::hardware_concurrency())); }

// prepare_note of every note, in order. The analysis is pure CPU per note (the stemmer and its
// cache are per thread), so a large batch (an import's) is split across the cores while the
// database waits anyway; the first invalid note in batch order fails the batch, as one thread
// would have found it.
std::vector<NoteWrite> prepare_notes(const std::vector<NoteInput>& notes) {
    std::vector<NoteWrite> out(notes.size());
    const std::size_t threads = notes.size() < kParallelPrepareNotes ? 1 : bulk_threads();
    std::vector<std::exception_ptr> failed(threads);
    auto part = [&](std::size_t k) {
        const std::size_t end = notes.size() * (k + 1) / threads;
        for (std::size_t i = notes.size() * k / threads; i < end; ++i) {
            try {
                out[i] = prepare_note(notes[i]);
            } catch (...) {
                failed[k] = std::current_exception();
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t k = 1; k < threads; ++k) pool.emplace_back(part, k);
    part(0);
    for (std::thread& t : pool) t.join();
    for (std::size_t k = 0; k < threads; ++k)  // parts are in batch order
        if (failed[k]) std::rethrow_exception(failed[k]);
    return out;
}

namespace {

SegmentNote segment_note(const NoteWrite& n) {
    return SegmentNote{n.in->updated_us, n.hi, n.lo, n.in->created_us, n.in->flags, n.title_len, n.body_len};
}

}  // namespace

void add_to_segment(const NoteWrite& n, const std::vector<TermCount>& old_terms, IndexDelta& delta) {
    auto by_term = [](const TermCount& a, const TermCount& b) { return a.term < b.term; };
    for (const TermCount& t : n.terms) {
        auto it = std::lower_bound(old_terms.begin(), old_terms.end(), t, by_term);
        if (it == old_terms.end() || it->term != t.term) delta.df.emplace_back(t.term, +1);
    }
    delta.segment.add(segment_note(n), n.terms);
}

void prebuild_segment(std::vector<NoteWrite>& notes, PrebuiltSegment& out) {
    std::size_t postings = 0, position_bytes = 0;
    for (const NoteWrite& n : notes) {
        postings += n.terms.size();
        for (const TermCount& t : n.terms) position_bytes += t.pos.size();
    }
    out.segment.reserve(notes.size(), postings, position_bytes);
    for (NoteWrite& n : notes) {
        out.segment.add(segment_note(n), n.terms);
        std::vector<TermCount>().swap(n.terms);
    }
    out.writes = &notes;
    out.df = out.segment.term_notes();  // a term once, however many notes hold it
    out.notes = notes.size();
}

void take_back_terms(PrebuiltSegment& p) {
    if (!p.writes) return;
    for (NoteWrite& n : *p.writes)  // a re-import's rare path: analysed once more
        n.terms = analyse_note(n.in->title, n.in->plain_text).terms;
    p.writes = nullptr;  // the batch holds its terms again
}

void drop_prebuilt(IndexDelta& delta) {
    PrebuiltSegment* p = std::exchange(delta.prebuilt, nullptr);
    p->segment = SegmentBuilder();  // its memory back before the notes are added again
    p->df = {};
    p->spent = true;
    take_back_terms(*p);
    for (const NoteWrite* n : p->taken) add_to_segment(*n, {}, delta);
}

void use_prebuilt(IndexDelta& delta) {
    if (delta.prebuilt->taken.size() != delta.prebuilt->notes) return drop_prebuilt(delta);
    PrebuiltSegment* p = std::exchange(delta.prebuilt, nullptr);
    delta.segment = std::move(p->segment);
    delta.df.insert(delta.df.end(), p->df.begin(), p->df.end());
    p->spent = true;
}

}  // namespace notesd::detail
