#include "server/fcgi_records.hpp"

#include <fastcgi.h>

namespace notesd {

namespace {

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

void append_length(std::string& out, std::size_t n) {
    if (n < 128) {
        out.push_back(static_cast<char>(n));
    } else {
        out.push_back(static_cast<char>(((n >> 24) & 0x7f) | 0x80));
        out.push_back(static_cast<char>((n >> 16) & 0xff));
        out.push_back(static_cast<char>((n >> 8) & 0xff));
        out.push_back(static_cast<char>(n & 0xff));
    }
}

struct Record {
    unsigned char type = 0;
    int request_id = 0;
    std::string_view content;
    std::size_t size = 0;  // header + content + padding
};

// The first whole record at the start of buf, or false when it has not all arrived.
bool next_record(const std::string& buf, Record& r) {
    if (buf.size() < FCGI_HEADER_LEN) return false;
    const auto* h = reinterpret_cast<const unsigned char*>(buf.data());
    const std::size_t len = (static_cast<std::size_t>(h[4]) << 8) | h[5];
    r.size = FCGI_HEADER_LEN + len + h[6];
    if (buf.size() < r.size) return false;
    r.type = h[1];
    r.request_id = (h[2] << 8) | h[3];
    r.content = std::string_view(buf).substr(FCGI_HEADER_LEN, len);
    return true;
}

}  // namespace

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

std::string encode_fastcgi_request(int request_id, const std::map<std::string, std::string>& params) {
    std::string out;
    const char begin[8] = {0, FCGI_RESPONDER, 0, 0, 0, 0, 0, 0};
    append_record(out, FCGI_BEGIN_REQUEST, request_id, std::string_view(begin, sizeof begin));
    std::string body;
    for (const auto& [k, v] : params) {
        append_length(body, k.size());
        append_length(body, v.size());
        body += k;
        body += v;
    }
    for (std::size_t pos = 0; pos < body.size(); pos += 65528)
        append_record(out, FCGI_PARAMS, request_id, std::string_view(body).substr(pos, 65528));
    append_record(out, FCGI_PARAMS, request_id, {});
    append_record(out, FCGI_STDIN, request_id, {});
    return out;
}

bool FcgiRequestReader::parse_params() {
    std::size_t i = 0;
    const std::string& d = params_raw_;
    auto length = [&](std::size_t& n) {
        if (i >= d.size()) return false;
        const auto b = static_cast<unsigned char>(d[i]);
        if (b < 128) {
            n = b;
            ++i;
            return true;
        }
        if (i + 4 > d.size()) return false;
        n = (static_cast<std::size_t>(b & 0x7f) << 24) |
            (static_cast<std::size_t>(static_cast<unsigned char>(d[i + 1])) << 16) |
            (static_cast<std::size_t>(static_cast<unsigned char>(d[i + 2])) << 8) |
            static_cast<unsigned char>(d[i + 3]);
        i += 4;
        return true;
    };
    while (i < d.size()) {
        std::size_t kn = 0, vn = 0;
        if (!length(kn) || !length(vn) || kn > d.size() - i || vn > d.size() - i - kn) return false;
        params_[d.substr(i, kn)] = d.substr(i + kn, vn);
        i += kn + vn;
    }
    return true;
}

FcgiRequestReader::State FcgiRequestReader::feed(const char* data, std::size_t n) {
    if (state_ != State::more) return state_;
    buf_.append(data, n);
    if (buf_.size() + params_raw_.size() > kMaxBytes) return state_ = State::bad;
    Record r;
    while (state_ == State::more && next_record(buf_, r)) {
        if (request_id_ < 0) {
            if (r.type != FCGI_BEGIN_REQUEST || r.content.size() < 8) return state_ = State::bad;
            request_id_ = r.request_id;
        } else if (r.request_id != request_id_) {
            return state_ = State::bad;  // one request per connection (nginx: keep_conn off)
        } else if (r.type == FCGI_PARAMS && !params_done_) {
            if (r.content.empty()) {
                params_done_ = true;
                if (!parse_params()) return state_ = State::bad;
            } else {
                params_raw_.append(r.content.data(), r.content.size());
            }
        } else if (r.type == FCGI_STDIN && params_done_) {
            if (r.content.empty()) state_ = State::done;  // a body is read and ignored
        } else if (r.type == FCGI_ABORT_REQUEST) {
            return state_ = State::bad;
        } else {
            return state_ = State::bad;
        }
        buf_.erase(0, r.size);
    }
    return state_;
}

std::string FcgiRequestReader::param(const std::string& name) const {
    const auto it = params_.find(name);
    return it == params_.end() ? std::string() : it->second;
}

FcgiResponseReader::State FcgiResponseReader::feed(const char* data, std::size_t n) {
    if (state_ != State::more) return state_;
    buf_.append(data, n);
    Record r;
    while (state_ == State::more && next_record(buf_, r)) {
        if (r.type == FCGI_STDOUT) out_.append(r.content.data(), r.content.size());
        else if (r.type == FCGI_END_REQUEST) state_ = State::done;
        else if (r.type != FCGI_STDERR) state_ = State::bad;
        buf_.erase(0, r.size);
    }
    return state_;
}

}  // namespace notesd
