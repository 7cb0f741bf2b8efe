// One note by id, and the note writes (contract section 10): parse the body, derive the note's
// fields with the importer's code (make_note), call the store's NoteEditor, render.
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

#include "api/body_fields.hpp"
#include "api/errors.hpp"
#include "api/handlers/write_render.hpp"
#include "api/render.hpp"
#include "api/router.hpp"
#include "base/phase_clock.hpp"
#include "base/util.hpp"
#include "ingest/import.hpp"
#include "store/store.hpp"
#include "api/handlers/handlers.hpp"

namespace notesd {
namespace {

constexpr std::size_t kMaxContentChars = 200000;
constexpr std::size_t kMaxCollectionRefs = 100;
constexpr std::size_t kMaxCollectionTitleChars = 1000;
constexpr long long kMaxVersion = 9007199254740991LL;  // 2^53 - 1: exact in every JSON client

// Which fields a response carries (contract section 10's table).
enum class NoteShape { Created, Updated, Full };

ApiError not_found() { return ApiError(404, "NOT_FOUND", "no such note"); }

ApiError trashed() {
    return ApiError(409, "NOTE_TRASHED", "the note is in the trash; restore it first");
}

// PDFs by extension, the query and fragment of a URL ignored.
bool is_pdf(const std::string& target) {
    std::string t = target.substr(0, target.find_first_of("?#"));
    if (t.size() < 4) return false;
    t = t.substr(t.size() - 4);
    for (char& c : t) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return t == ".pdf";
}

void write_attachment_metadata(JsonOut& j, const std::vector<Attachment>& atts) {
    j.begin_array();
    for (const Attachment& a : atts) {
        const char* kind = a.kind == AttachmentKind::Image ? "image"
                           : a.kind == AttachmentKind::File && is_pdf(a.target) ? "pdf"
                                                                                 : nullptr;
        if (!kind) continue;
        j.begin_object();
        j.key("attachment_id").str(a.id);
        j.key("attachment_kind").str(kind);
        j.key("page_count").null();
        j.key("summary").null();
        j.key("ocr_text").null();
        j.end_object();
    }
    j.end_array();
}

// The body without request_id when request_id is empty (the ETag's input).
std::string render_note(const std::string& request_id, const NoteRecord& n, NoteShape shape) {
    JsonOut j;
    j.begin_object();
    if (!request_id.empty()) j.key("request_id").str(request_id);
    j.key("id").str(n.id);
    j.key("title").str(n.title);
    j.key("content").str(n.content);
    j.key("version").num(n.version);
    j.key("collection_ids").str_array(n.collection_ids);
    if (shape == NoteShape::Full) {
        j.key("audio_recording_ids").str_array(n.audio_recording_ids);
        j.key("attachment_metadata");
        write_attachment_metadata(j, n.attachments);
    }
    if (shape != NoteShape::Created) {
        j.key("trashed_at");
        if (n.trashed_us) j.str(format_time(*n.trashed_us));
        else j.null();
    }
    j.key("created_at").str(format_time(n.created_us));
    j.key("updated_at").str(format_time(n.updated_us));
    j.end_object();
    return j.take();
}

// Opaque, and it changes whenever any field of the GET response changes: a hash of that body.
std::string etag_of(const NoteRecord& n) {
    return "\"" + sha256_hex(render_note("", n, NoteShape::Full)).substr(0, 32) + "\"";
}

// If-None-Match: "*" or a comma-separated list of (possibly weak) entity tags.
bool etag_matches(const std::string& header, const std::string& etag) {
    std::size_t i = 0;
    while (i < header.size()) {
        std::size_t e = header.find(',', i);
        if (e == std::string::npos) e = header.size();
        std::string tag = header.substr(i, e - i);
        tag.erase(0, tag.find_first_not_of(" \t"));
        tag.erase(tag.find_last_not_of(" \t") + 1);
        if (tag.compare(0, 2, "W/") == 0) tag.erase(0, 2);
        if (tag == "*" || tag == etag) return true;
        i = e + 1;
    }
    return false;
}

HttpResponse note_response(const HttpRequest& req, const NoteRecord& n, NoteShape shape) {
    mark_phase(Phase::render);
    HttpResponse r;
    r.body = render_note(req.request_id, n, shape);
    if (shape == NoteShape::Full) r.headers.emplace_back("ETag", etag_of(n));
    return r;
}

// Case folding without the accent removal of search (a title match is exact but for case).
std::string casefold(const std::string& s) {
    utf8proc_uint8_t* out = nullptr;
    const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                static_cast<utf8proc_ssize_t>(s.size()), &out,
                                static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE |
                                                               UTF8PROC_CASEFOLD));
    std::string folded = n >= 0 ? std::string(reinterpret_cast<char*>(out), static_cast<std::size_t>(n)) : s;
    std::free(out);
    return folded;
}

// The caller's collections whose title equals one of `titles` but for case, after `ids`.
std::vector<std::string> with_titled_collections(NoteEditor& store, long long user_id,
                                                 std::vector<std::string> ids,
                                                 const std::vector<std::string>& titles) {
    if (titles.empty()) return ids;
    std::vector<std::string> wanted;
    for (const std::string& t : titles) wanted.push_back(casefold(t));
    for (const auto& [id, title] : store.collection_titles(user_id))
        if (std::find(wanted.begin(), wanted.end(), casefold(title)) != wanted.end() &&
            std::find(ids.begin(), ids.end(), id) == ids.end())
            ids.push_back(id);
    return ids;
}

std::string note_id_of(const Route& route) { return path_uuid("note_id", route.params.at(0)); }

}  // namespace

HttpResponse get_note(const HttpRequest& req, const Route& route, const Principal& who,
                      NoteEditor& store, ReadViews& views) {
    const std::string id = note_id_of(route);
    mark_phase(Phase::store);
    std::optional<NoteRecord> note;
    {
        ReadScope view(views);  // the row, links and attachments of one version
        note = store.find_note(who.user_id, id);
    }
    if (!note) throw not_found();
    const std::string etag = etag_of(*note);
    if (!req.if_none_match.empty() && etag_matches(req.if_none_match, etag)) {
        HttpResponse r;
        r.status = 304;
        r.headers.emplace_back("ETag", etag);
        return r;
    }
    return note_response(req, *note, NoteShape::Full);
}

HttpResponse create_note(const HttpRequest& req, const Principal& who, NoteEditor& store) {
    const Json::Value body = parse_body_object(req, false);
    const BodyFields b(body);
    const long long now = now_us();
    std::string content = b.req_string("content", 0, kMaxContentChars);
    const std::optional<std::string> id = b.opt_uuid("id");
    std::vector<std::string> collections = b.uuid_array("collection_ids", kMaxCollectionRefs);
    const std::vector<std::string> titles =
        b.string_array("collection_titles", kMaxCollectionRefs, kMaxCollectionTitleChars);
    const WriteTimes times = create_times(b, now);
    collections = with_titled_collections(store, who.user_id, std::move(collections), titles);
    const NoteInput n = make_note(who.user_id, id.value_or(new_uuid()), std::move(content),
                                  std::nullopt, times.created_us, times.updated_us,
                                  std::move(collections));
    mark_phase(Phase::store);
    const NoteWriteResult r = store.create_note(who.user_id, n);
    if (r.status == NoteWriteStatus::IdTaken)
        throw ApiError(409, "CONFLICT", "a note with this id already exists (in the trash, perhaps)",
                       "id");
    return note_response(req, r.note, NoteShape::Created);
}

HttpResponse update_note(const HttpRequest& req, const Route& route, const Principal& who,
                         NoteEditor& store) {
    const std::string id = note_id_of(route);
    const Json::Value body = parse_body_object(req, false);
    const BodyFields b(body);
    const long long now = now_us();
    std::string content = b.req_string("content", 0, kMaxContentChars);
    const long long version = b.req_int("version", 1, kMaxVersion);
    const long long updated = write_time(b, "updated_at", now).value_or(now);
    // created_at and the collection links are the stored ones: the store keeps them.
    const NoteInput n = make_note(who.user_id, id, std::move(content), std::nullopt, updated,
                                  updated, {});
    mark_phase(Phase::store);
    const NoteWriteResult r = store.update_note(who.user_id, n, version);
    switch (r.status) {
        case NoteWriteStatus::Done: break;
        case NoteWriteStatus::Trashed: throw trashed();
        case NoteWriteStatus::VersionConflict:
            throw ApiError(409, "VERSION_CONFLICT",
                           "version " + std::to_string(version) +
                               " is not the current version of this note; the current version is " +
                               std::to_string(r.note.version),
                           "version");
        case NoteWriteStatus::UpdatedBeforeCreated:
            throw invalid_parameter("updated_at",
                                    "updated_at must not be earlier than the note's created_at (" +
                                        format_time(r.note.created_us) + ")");
        default: throw not_found();
    }
    return note_response(req, r.note, NoteShape::Updated);
}

HttpResponse delete_note(const HttpRequest& req, const Route& route, const Principal& who,
                         NoteWriter& store) {
    mark_phase(Phase::store);
    if (!store.delete_note(who.user_id, note_id_of(route))) throw not_found();
    return acknowledgement(req.request_id);
}

HttpResponse trash_note(const HttpRequest& req, const Route& route, const Principal& who,
                        NoteTrash& store) {
    mark_phase(Phase::store);
    if (!store.trash_note(who.user_id, note_id_of(route), now_us())) throw not_found();
    return acknowledgement(req.request_id);
}

HttpResponse restore_note(const HttpRequest& req, const Route& route, const Principal& who,
                          NoteTrash& store) {
    mark_phase(Phase::store);
    if (!store.restore_note(who.user_id, note_id_of(route))) throw not_found();
    return acknowledgement(req.request_id);
}

HttpResponse set_note_created(const HttpRequest& req, const Route& route, const Principal& who,
                              NoteEditor& store) {
    const std::string id = note_id_of(route);
    const Json::Value body = parse_body_object(req, false);
    const BodyFields b(body);
    const std::optional<long long> created = write_time(b, "created_at", now_us());
    if (!created)
        throw invalid_parameter("created_at", "created_at is required: an RFC 3339 date-time "
                                              "earlier than the note's current created_at");
    mark_phase(Phase::store);
    const NoteWriteResult r = store.set_note_created(who.user_id, id, *created);
    switch (r.status) {
        case NoteWriteStatus::Done: break;
        case NoteWriteStatus::Trashed: throw trashed();
        case NoteWriteStatus::NotEarlier:
            throw invalid_parameter("created_at", "created_at must be earlier than the note's "
                                                  "current created_at (" +
                                                      format_time(r.note.created_us) + ")");
        default: throw not_found();
    }
    return note_response(req, r.note, NoteShape::Full);
}

}  // namespace notesd
