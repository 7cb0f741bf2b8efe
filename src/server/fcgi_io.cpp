#include "server/fcgi_io.hpp"

#include <fastcgi.h>
#include <fcgiapp.h>

#include <stdexcept>
#include <vector>

#include "api/errors.hpp"
#include "base/util.hpp"

namespace notesd {

namespace {

// Bytes read and thrown away after the body (or instead of an oversized body): enough for any
// body nginx lets through, bounded so a misbehaving peer cannot keep a worker reading forever.
constexpr std::size_t kMaxDrainBytes = 64u * 1024 * 1024;

std::string param(FCGX_Request& r, const char* name) {
    const char* v = FCGX_GetParam(name, r.envp);
    return v ? std::string(v) : std::string();
}

// Reads and discards the rest of FCGI_STDIN, so the peer never sees a reset while it still
// writes, and so the deadline handler can answer on a connection with nothing left to read.
void drain(FCGX_Stream* in) {
    char buf[16384];
    std::size_t total = 0;
    while (total < kMaxDrainBytes) {
        const int n = FCGX_GetStr(buf, sizeof buf, in);
        if (n <= 0) break;
        total += static_cast<std::size_t>(n);
        if (n < static_cast<int>(sizeof buf)) break;  // GetStr returns short only at end of stream
    }
}

void append_record(std::string& out, unsigned char type, int request_id, std::string_view content) {
    const std::size_t len = content.size();
    const unsigned char pad = static_cast<unsigned char>((8 - len % 8) % 8);
    const unsigned char header[FCGI_HEADER_LEN] = {
        FCGI_VERSION_1,
        type,
        static_cast<unsigned char>((request_id >> 8) & 0xff),
        static_cast<unsigned char>(request_id & 0xff),
        static_cast<unsigned char>((len >> 8) & 0xff),
        static_cast<unsigned char>(len & 0xff),
        pad,
        0};
    out.append(reinterpret_cast<const char*>(header), sizeof header);
    out.append(content.data(), content.size());
    out.append(pad, '\0');
}

// Header values come from our own code, but a stray CR/LF would split the CGI header block.
std::string header_safe(const std::string& v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c != '\r' && c != '\n') out.push_back(c);
    }
    return out;
}

HttpResponse reject(int status, const char* kind, const std::string& message,
                    const std::string& request_id) {
    return render_error(ApiError(status, kind, message), request_id);
}

}  // namespace

struct FcgiEndpoint::Impl {
    FCGX_Request req{};
    bool active = false;  // between a successful accept and finish
};

FcgiEndpoint::FcgiEndpoint(int listen_fd) : impl_(std::make_unique<Impl>()) {
    if (FCGX_Init() != 0) throw std::runtime_error("FCGX_Init failed");
    if (FCGX_InitRequest(&impl_->req, listen_fd, 0) != 0)
        throw std::runtime_error("FCGX_InitRequest failed");
}

FcgiEndpoint::~FcgiEndpoint() {
    finish();
    FCGX_Free(&impl_->req, 1);
}

int FcgiEndpoint::accept() {
    const int rc = FCGX_Accept_r(&impl_->req);
    impl_->active = (rc >= 0);
    return rc;
}

IncomingRequest FcgiEndpoint::read_request(std::size_t max_body_bytes) {
    FCGX_Request& r = impl_->req;
    IncomingRequest in;
    HttpRequest& h = in.request;
    h.method = param(r, "REQUEST_METHOD");
    h.path = param(r, "DOCUMENT_URI");
    h.query = param(r, "QUERY_STRING");
    h.content_type = param(r, "CONTENT_TYPE");
    h.authorization = param(r, "HTTP_AUTHORIZATION");
    h.request_id = request_id_from(param(r, "REQUEST_ID"));
    h.remote_addr = param(r, "REMOTE_ADDR");
    const std::string cl = param(r, "CONTENT_LENGTH");

    const std::optional<std::size_t> len = parse_content_length(cl);
    if (!len) {
        drain(r.in);
        in.rejection = reject(400, "BAD_REQUEST", "Content-Length is not a valid number",
                              h.request_id);
        return in;
    }
    if (*len > max_body_bytes) {
        drain(r.in);  // read but never stored
        in.rejection = reject(413, "PAYLOAD_TOO_LARGE",
                              "the request body must be at most " +
                                  std::to_string(max_body_bytes) + " bytes",
                              h.request_id);
        return in;
    }
    h.has_body = *len > 0;
    if (*len > 0) {
        h.body.resize(*len);
        const int got = FCGX_GetStr(&h.body[0], static_cast<int>(*len), r.in);
        if (got < 0 || static_cast<std::size_t>(got) != *len) {
            h.body.clear();
            in.rejection = reject(400, "BAD_REQUEST",
                                  "the request body is shorter than its Content-Length",
                                  h.request_id);
            return in;
        }
    }
    drain(r.in);
    return in;
}

bool FcgiEndpoint::write_response(const HttpResponse& resp) {
    if (!impl_->active) return false;
    const std::string out = encode_cgi_response(resp);
    return FCGX_PutStr(out.data(), static_cast<int>(out.size()), impl_->req.out) ==
           static_cast<int>(out.size());
}

std::string FcgiEndpoint::raw_response(const HttpResponse& resp) const {
    return encode_fastcgi_records(impl_->req.requestId, encode_cgi_response(resp));
}

int FcgiEndpoint::connection_fd() const { return impl_->active ? impl_->req.ipcFd : -1; }

void FcgiEndpoint::finish() {
    if (!impl_->active) return;
    impl_->active = false;
    // libfcgi closes a connection gracefully unless the request is "detached": shutdown(), then
    // poll() until the peer closes its end, so that unread input cannot turn the close into a
    // reset. read_request drains FCGI_STDIN, so once the stream has seen its end nothing is
    // left to read: a plain close() is as safe, and the worker goes on to its next connection
    // instead of waiting for nginx to get round to closing this one (a wait, two syscalls and
    // a wake-up per request). FCGX_Free clears the flag again.
    if (impl_->req.in && FCGX_HasSeenEOF(impl_->req.in) == EOF) impl_->req.detached = 1;
    FCGX_Finish_r(&impl_->req);
}

const char* reason_phrase(int status) {
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
    }
}

std::string encode_cgi_response(const HttpResponse& r) {
    std::string out;
    out.reserve(128 + r.body.size() + r.headers.size() * 48);
    out += "Status: ";
    out += std::to_string(r.status);
    out += ' ';
    out += reason_phrase(r.status);
    out += "\r\n";
    for (const auto& h : r.headers) {
        out += header_safe(h.first);
        out += ": ";
        out += header_safe(h.second);
        out += "\r\n";
    }
    out += "\r\n";
    out += r.body;
    return out;
}

std::string encode_fastcgi_records(int request_id, std::string_view payload) {
    // Chunks stay a multiple of 8 below the 16-bit record length limit.
    constexpr std::size_t kChunk = 65528;
    std::string out;
    out.reserve(payload.size() + (payload.size() / kChunk + 3) * 16 + 8);
    for (std::size_t pos = 0; pos < payload.size(); pos += kChunk)
        append_record(out, FCGI_STDOUT, request_id, payload.substr(pos, kChunk));
    append_record(out, FCGI_STDOUT, request_id, {});
    const char end_body[8] = {0, 0, 0, 0, FCGI_REQUEST_COMPLETE, 0, 0, 0};
    append_record(out, FCGI_END_REQUEST, request_id, std::string_view(end_body, sizeof end_body));
    return out;
}

std::optional<std::size_t> parse_content_length(std::string_view v) {
    if (v.empty()) return std::size_t{0};
    if (v.size() > 18) return std::nullopt;
    std::size_t n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    return n;
}

}  // namespace notesd
