#include "api/app.hpp"

#include <stdexcept>

#include "api/auth.hpp"
#include "api/cursor.hpp"
#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/router.hpp"
#include "base/log.hpp"
#include "base/phase_clock.hpp"
#include "store/store.hpp"

namespace notesd {
namespace {

// Retry-After of a fault an operator has to end (a full disk, a read-only or unopenable file):
// clients need not come back every second meanwhile.
constexpr int kRetryAfterOperatorFaultS = 5;

}  // namespace

App::App(const Config& cfg)
    : cfg_(cfg), cursors_(std::make_unique<CursorCodec>(effective_secret(cfg))) {}

App::~App() = default;

void App::after_response() noexcept {
    if (store_) store_->housekeeping();
}

Store& App::store() {
    if (!store_) {
        // A database that cannot be reached or opened is a StoreUnavailable: no store yet,
        // and the next request tries again.
        std::unique_ptr<Store> s =
            open_store(cfg_.db, cfg_.db_busy_timeout_ms, cfg_.db_connect_timeout_s);
        s->defer_housekeeping();  // the worker calls after_response between requests
        store_ = std::move(s);
    }
    return *store_;
}

// The handler of the endpoint, given the roles of the store it uses.
HttpResponse App::dispatch(const HttpRequest& req, const Route& rt, const Principal& who) {
    Store& st = store();
    switch (rt.endpoint) {
        case Endpoint::ListNotes: return list_notes(req, who, st, st, *cursors_);
        case Endpoint::ListCollections: return list_collections(req, who, st, st, *cursors_);
        case Endpoint::SearchNotes:
            return search_notes(req, who, st, SearchSettings{cfg_.snapshot_ttl_s});
        case Endpoint::GetNote: return get_note(req, rt, who, st, st);
        case Endpoint::CreateNote: return create_note(req, who, st);
        case Endpoint::UpdateNote: return update_note(req, rt, who, st);
        case Endpoint::DeleteNote: return delete_note(req, rt, who, st);
        case Endpoint::TrashNote: return trash_note(req, rt, who, st);
        case Endpoint::RestoreNote: return restore_note(req, rt, who, st);
        case Endpoint::SetNoteCreated: return set_note_created(req, rt, who, st);
        case Endpoint::CreateCollection: return create_collection(req, who, st);
        case Endpoint::GetCollection: return get_collection(req, rt, who, st);
        case Endpoint::UpdateCollection: return update_collection(req, rt, who, st);
        case Endpoint::DeleteCollection: return delete_collection(req, rt, who, st);
        case Endpoint::SearchCollections: return search_collections(req, who, st, st);
        case Endpoint::LinkNote: return link_note(req, rt, who, st);
        case Endpoint::UnlinkNote: return unlink_note(req, rt, who, st);
        case Endpoint::MoveNote: return move_note(req, rt, who, st);
        case Endpoint::RelatedNotes: return related_notes(req, rt, who, st);
        case Endpoint::ExtendedSearch: return extended_search(req, who, st, *cursors_);
    }
    throw std::logic_error("an endpoint without a handler");
}

HttpResponse App::handle(const HttpRequest& req) {
    long long user_id = 0;
    int endpoint = -1;  // for the metrics, also when the request fails after routing
    try {
        const Route rt = route(req.method, req.path);
        endpoint = endpoint_index(rt.endpoint);
        const Principal who = authenticate(req.authorization, store());
        user_id = who.user_id;
        // Before anything is looked up, so a read-only token learns nothing about what exists.
        if (rt.writes && who.scope == TokenScope::ReadOnly)
            throw ApiError(403, "FORBIDDEN", "this token is read-only; writes need a read-write token");
        mark_phase(Phase::parse);
        HttpResponse r = dispatch(req, rt, who);
        add_standard_headers(r, req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    } catch (const ApiError& e) {
        HttpResponse r = render_error(e, req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    } catch (const StoreUnavailable& e) {
        // The store has classified the fault and opens a new connection itself where the
        // fault needs one (store/fault.hpp): the worker recovers once the fault is gone. What()
        // holds no SQL or bound values.
        log_event(LogLevel::warn, req.request_id, "database unavailable",
                  {{"fault", fault_name(e.fault())}, {"detail", e.what()}});
        const int retry_after_s = passes_by_itself(e.fault()) ? 1 : kRetryAfterOperatorFaultS;
        HttpResponse r = render_error(
            unavailable("the database is unavailable; retry shortly", retry_after_s),
            req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    } catch (const std::exception& e) {
        // The store converts database errors to safe messages, so what() holds no bound values.
        log_event(LogLevel::error, req.request_id, "internal error", {{"detail", e.what()}});
        store_.reset();
        HttpResponse r = render_error(
            ApiError(500, "INTERNAL_ERROR", "an internal error occurred; it has been logged"),
            req.request_id);
        r.user_id = user_id;
        r.endpoint = endpoint;
        return r;
    }
}

}  // namespace notesd
