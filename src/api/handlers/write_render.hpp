// JSON of the write side's responses that more than one handler file writes.
#pragma once
#include <string>

#include "api/http.hpp"
#include "api/render.hpp"
#include "base/phase_clock.hpp"

namespace notesd {

/// 200 with `body`.
inline HttpResponse json_ok(std::string body) {
    mark_phase(Phase::render);
    HttpResponse r;
    r.body = std::move(body);
    return r;
}

/// An acknowledgement: {"request_id"} alone (contract section 10).
inline HttpResponse acknowledgement(const std::string& request_id) {
    mark_phase(Phase::render);
    JsonOut j;
    j.begin_object().key("request_id").str(request_id).end_object();
    return json_ok(j.take());
}

}  // namespace notesd
