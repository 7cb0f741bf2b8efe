#include "server/fcgi_io.hpp"

#include <fcgiapp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
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
    int listen_fd = -1;
    struct timeval io_timeout {};
    int accept_errno = 0;
    bool active = false;  // between a successful accept and finish
};

FcgiEndpoint::FcgiEndpoint(int listen_fd, int io_timeout_ms) : impl_(std::make_unique<Impl>()) {
    if (FCGX_Init() != 0) throw std::runtime_error("FCGX_Init failed");
    // libfcgi never accepts by itself: accept() hands it connections that already carry their
    // timeouts. Its own accept (after it gave up on a broken connection) then fails on -1.
    if (FCGX_InitRequest(&impl_->req, -1, 0) != 0)
        throw std::runtime_error("FCGX_InitRequest failed");
    impl_->listen_fd = listen_fd;
    impl_->io_timeout.tv_sec = io_timeout_ms / 1000;
    impl_->io_timeout.tv_usec = (io_timeout_ms % 1000) * 1000;
}

FcgiEndpoint::~FcgiEndpoint() {
    finish();
    FCGX_Free(&impl_->req, 1);
}

AcceptResult FcgiEndpoint::accept() {
    Impl& m = *impl_;
    m.active = false;
    // A unix socket's accepted connections do not inherit SO_RCVTIMEO from the listener, and
    // libfcgi reads the begin record and params inside FCGX_Accept_r, blocking, for as long as
    // the peer likes. So the worker accepts, sets the timeouts, and gives libfcgi the open
    // connection the way it keeps one for FCGI_KEEP_CONN: ipcFd set, and keepConnection so
    // that the Finish at the top of FCGX_Accept_r does not close it.
    const int fd = accept4(m.listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ECONNABORTED) return AcceptResult::none;
        m.accept_errno = e;
        return AcceptResult::error;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &m.io_timeout, sizeof m.io_timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &m.io_timeout, sizeof m.io_timeout);
    m.req.ipcFd = fd;
    m.req.keepConnection = 1;
    // A read error or timeout makes libfcgi close the connection and accept anew on the
    // request's listen_sock, -1 here: the call then fails with -EBADF, nothing else happens.
    const int rc = FCGX_Accept_r(&m.req);
    if (rc < 0) return AcceptResult::input_failed;
    m.active = true;
    return AcceptResult::request;
}

int FcgiEndpoint::error_number() const { return impl_->accept_errno; }

bool FcgiEndpoint::input_timed_out() const {
    const int e = impl_->req.in ? FCGX_GetError(impl_->req.in) : 0;
    return e == EAGAIN || e == EWOULDBLOCK;
}

IncomingRequest FcgiEndpoint::read_request(
    const std::function<std::size_t(const HttpRequest&)>& body_cap) {
    FCGX_Request& r = impl_->req;
    IncomingRequest in;
    HttpRequest& h = in.request;
    h.method = param(r, "REQUEST_METHOD");
    h.path = param(r, "DOCUMENT_URI");
    h.query = param(r, "QUERY_STRING");
    h.content_type = param(r, "CONTENT_TYPE");
    h.authorization = param(r, "HTTP_AUTHORIZATION");
    h.if_none_match = param(r, "HTTP_IF_NONE_MATCH");
    h.request_id = request_id_from(param(r, "REQUEST_ID"));
    h.remote_addr = param(r, "REMOTE_ADDR");
    const std::string cl = param(r, "CONTENT_LENGTH");
    const std::size_t max_body_bytes = body_cap(h);

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
    // A peer whose input failed (stalled past io_timeout_ms, or broke off) gets no wait either.
    if (impl_->req.in &&
        (FCGX_HasSeenEOF(impl_->req.in) == EOF || FCGX_GetError(impl_->req.in) != 0))
        impl_->req.detached = 1;
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
