#!/bin/sh
# Builds a private nginx prefix DIR from the project's nginx files, for `make run` and the tests:
#   sh nginx/mkprefix.sh DIR [NAME=VALUE ...]
#   nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'
# or fills in the site file alone for a system nginx (installed paths as defaults):
#   sh nginx/mkprefix.sh --site /etc/nginx/sites-available/notesd [NAME=VALUE ...]
# Settings (placeholders of notesd-site.conf) and their defaults:
#   LISTEN=127.0.0.1:8080  SERVER_NAME=_  FCGI_READ_TIMEOUT=30s
#   STATUS_SOCKET=unix:DIR/notesd-status.sock   notesd's status_listen (the /notesd-status page)
#   POOL_MAX_CONNS=64      requests nginx hands to the pool at once (queued or served); more
#                          are the JSON 503 at once. About 8-16 x notesd's workers.
#   FCGI_UPSTREAM="server unix:DIR/notesd.sock max_conns=POOL_MAX_CONNS;" (write max_conns=
#                          on each server line yourself when you set this)
#   CONN_PER_ADDR=32       requests one client address may have in progress at once
#   READ_RATE=off  READ_BURST=40  WRITE_RATE=off  WRITE_BURST=10
#                          per-token rate limits (requests without a valid token: per address),
#                          e.g. READ_RATE=20r/s; off by default
#   ACCESS_LOG=DIR/logs/access.log  NGINX_USER=www-data (only used when run as root)
#   NGINX_DIR=DIR (where notesd-errors.conf and notesd-fastcgi.conf are included from;
#                  --site: /usr/share/notesd/nginx)
#   OPENAPI_JSON=the OpenAPI document served at /v2/openapi.json (--site: the file nginx reads;
#     DIR: the file copied to DIR/openapi.json). Default: the installed one beside this script's
#     directory; else --site: /usr/share/notesd/openapi.json, DIR: the source tree's built
#     doc/openapi.json
# Standalone only (nginx.conf): WORKER_CONNECTIONS=16384 (and half as many file
#                          descriptors: worker_rlimit_nofile).
# Run as root, DIR becomes group NGINX_USER with mode 2750: see nginx-standalone.conf.in.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 DIR [NAME=VALUE ...] | --site FILE [NAME=VALUE ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
site_only=
if [ "$1" = --site ]; then
    [ $# -ge 2 ] || usage
    site_only=$2
    shift 2
    nginx_dir=/usr/share/notesd/nginx
    socket=/run/notesd/notesd.sock
    STATUS_SOCKET=unix:/run/notesd/notesd-status.sock
    # installed beside this script's directory ($(pkgdatadir)), else Debian's path
    OPENAPI_JSON=/usr/share/notesd/openapi.json
    if [ -f "$here/../openapi.json" ]; then OPENAPI_JSON=$(cd "$here/.." && pwd)/openapi.json; fi
    ACCESS_LOG=/var/log/nginx/notesd.access.log
else
    mkdir -p "$1"
    dir=$(cd "$1" && pwd)
    nginx_dir=$dir
    shift
    socket=$dir/notesd.sock
    STATUS_SOCKET=unix:$dir/notesd-status.sock
    ACCESS_LOG=$dir/logs/access.log
    OPENAPI_JSON=
    for f in "$here/../openapi.json" "$here/../doc/openapi.json"; do
        if [ -z "$OPENAPI_JSON" ] && [ -f "$f" ]; then OPENAPI_JSON=$f; fi
    done
fi

LISTEN=127.0.0.1:8080
SERVER_NAME=_
FCGI_READ_TIMEOUT=30s
FCGI_UPSTREAM=
POOL_MAX_CONNS=64
CONN_PER_ADDR=32
READ_RATE=off
READ_BURST=40
WRITE_RATE=off
WRITE_BURST=10
WORKER_CONNECTIONS=16384
NGINX_USER=www-data

for kv in "$@"; do
    name=${kv%%=*}
    value=${kv#*=}
    case $value in *'
'*) echo "mkprefix.sh: $name: newlines are not allowed" >&2; exit 2 ;; esac
    case $name in
        LISTEN) LISTEN=$value ;;
        SERVER_NAME) SERVER_NAME=$value ;;
        FCGI_UPSTREAM) FCGI_UPSTREAM=$value ;;
        STATUS_SOCKET) STATUS_SOCKET=$value ;;
        FCGI_READ_TIMEOUT) FCGI_READ_TIMEOUT=$value ;;
        POOL_MAX_CONNS) POOL_MAX_CONNS=$value ;;
        CONN_PER_ADDR) CONN_PER_ADDR=$value ;;
        READ_RATE) READ_RATE=$value ;;
        READ_BURST) READ_BURST=$value ;;
        WRITE_RATE) WRITE_RATE=$value ;;
        WRITE_BURST) WRITE_BURST=$value ;;
        WORKER_CONNECTIONS) WORKER_CONNECTIONS=$value ;;
        ACCESS_LOG) ACCESS_LOG=$value ;;
        NGINX_USER) NGINX_USER=$value ;;
        NGINX_DIR) nginx_dir=$value ;;
        OPENAPI_JSON) OPENAPI_JSON=$value ;;
        *) echo "mkprefix.sh: unknown setting '$name'" >&2; exit 2 ;;
    esac
done

positive() {  # NAME VALUE: a whole number from 1
    case $2 in ''|*[!0-9]*|0*) echo "mkprefix.sh: $1 must be a whole number from 1, not '$2'" >&2; exit 2 ;; esac
}
positive POOL_MAX_CONNS "$POOL_MAX_CONNS"
positive CONN_PER_ADDR "$CONN_PER_ADDR"
positive READ_BURST "$READ_BURST"
positive WRITE_BURST "$WRITE_BURST"
positive WORKER_CONNECTIONS "$WORKER_CONNECTIONS"
[ -n "$FCGI_UPSTREAM" ] || FCGI_UPSTREAM="server unix:$socket max_conns=$POOL_MAX_CONNS;"

# A rate (NAME VALUE) is "off" or N r/s or N r/m. Sets rate, key (the zone's key: "" counts
# nothing) and retry (Retry-After of its 429: seconds until the bucket lets one more through).
rate_limit() {
    case $2 in
        off) rate=1r/s; key='""'; retry=1; return ;;
        *r/s|*r/m) n=${2%r/?} ;;
        *) n= ;;
    esac
    case $n in ''|*[!0-9]*|0*) echo "mkprefix.sh: $1 must be off, Nr/s or Nr/m, not '$2'" >&2; exit 2 ;; esac
    rate=$2
    key='$notesd_rate_key'
    case $2 in *r/s) retry=1 ;; *) retry=$(( (60 + n - 1) / n )) ;; esac
}
rate_limit READ_RATE "$READ_RATE"
read_rate=$rate read_key=$key read_retry=$retry
rate_limit WRITE_RATE "$WRITE_RATE"
write_rate=$rate write_key=$key write_retry=$retry

# sed replacement text: escape backslash, ampersand and the | delimiter.
esc() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }

render_site() {  # placeholders in comments stay as they are: they document the file
    sed -e "/^[[:space:]]*#/!s|@LISTEN@|$(esc "$LISTEN")|g" \
        -e "/^[[:space:]]*#/!s|@SERVER_NAME@|$(esc "$SERVER_NAME")|g" \
        -e "/^[[:space:]]*#/!s|@FCGI_UPSTREAM@|$(esc "$FCGI_UPSTREAM")|g" \
        -e "/^[[:space:]]*#/!s|@FCGI_READ_TIMEOUT@|$(esc "$FCGI_READ_TIMEOUT")|g" \
        -e "/^[[:space:]]*#/!s|@STATUS_SOCKET@|$(esc "$STATUS_SOCKET")|g" \
        -e "/^[[:space:]]*#/!s|@CONN_PER_ADDR@|$(esc "$CONN_PER_ADDR")|g" \
        -e "/^[[:space:]]*#/!s|@READ_LIMIT_KEY@|$(esc "$read_key")|g" \
        -e "/^[[:space:]]*#/!s|@READ_RATE@|$(esc "$read_rate")|g" \
        -e "/^[[:space:]]*#/!s|@READ_BURST@|$(esc "$READ_BURST")|g" \
        -e "/^[[:space:]]*#/!s|@READ_RETRY_AFTER@|$(esc "$read_retry")|g" \
        -e "/^[[:space:]]*#/!s|@WRITE_LIMIT_KEY@|$(esc "$write_key")|g" \
        -e "/^[[:space:]]*#/!s|@WRITE_RATE@|$(esc "$write_rate")|g" \
        -e "/^[[:space:]]*#/!s|@WRITE_BURST@|$(esc "$WRITE_BURST")|g" \
        -e "/^[[:space:]]*#/!s|@WRITE_RETRY_AFTER@|$(esc "$write_retry")|g" \
        -e "/^[[:space:]]*#/!s|@ACCESS_LOG@|$(esc "$ACCESS_LOG")|g" \
        -e "/^[[:space:]]*#/!s|@NGINX_DIR@|$(esc "$nginx_dir")|g" \
        -e "/^[[:space:]]*#/!s|@OPENAPI_JSON@|$(esc "$openapi_served")|g" \
        "$here/notesd-site.conf" > "$1.tmp"
    mv "$1.tmp" "$1"
}

if [ -n "$site_only" ]; then
    openapi_served=$OPENAPI_JSON
    render_site "$site_only"
    exit 0
fi

if [ "$(id -u)" = 0 ]; then
    # The workers run as NGINX_USER; they must reach DIR (temp files) and the socket in it.
    chgrp "$NGINX_USER" "$dir"
    chmod 2750 "$dir"
    USER_DIRECTIVE="user $NGINX_USER $NGINX_USER;"
else
    chmod 0700 "$dir"
    USER_DIRECTIVE="# not started as root: the workers keep the current user"
fi
mkdir -p "$dir/logs" "$dir/tmp" "$dir/conf.d"

# nginx's workers read the document from DIR (a source tree may be out of their reach).
if [ -z "$OPENAPI_JSON" ] || [ ! -f "$OPENAPI_JSON" ]; then
    echo "mkprefix.sh: no OpenAPI document ${OPENAPI_JSON:-found} (run make: it builds doc/openapi.json; or set OPENAPI_JSON=)" >&2
    exit 1
fi
openapi_served=$dir/openapi.json
cp "$OPENAPI_JSON" "$openapi_served.tmp"
chmod 0644 "$openapi_served.tmp"
mv "$openapi_served.tmp" "$openapi_served"

render_site "$dir/notesd-site.conf"
cp "$here/notesd-errors.conf" "$here/notesd-fastcgi.conf" "$dir/"
sed -e "s|@PREFIX@|$(esc "$dir")|g" \
    -e "s|@WORKER_CONNECTIONS@|$WORKER_CONNECTIONS|g" \
    -e "s|@WORKER_RLIMIT_NOFILE@|$((WORKER_CONNECTIONS / 2))|g" \
    -e "s|@USER_DIRECTIVE@|$(esc "$USER_DIRECTIVE")|g" \
    "$here/nginx-standalone.conf.in" > "$dir/nginx.conf.tmp"
mv "$dir/nginx.conf.tmp" "$dir/nginx.conf"
if grep -n '@[A-Z_]*@' "$dir/nginx.conf" "$dir/notesd-site.conf" | grep -v '^[^:]*:[0-9]*:#' >&2; then
    echo "mkprefix.sh: placeholders left unreplaced" >&2
    exit 1
fi
