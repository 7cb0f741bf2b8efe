#!/bin/sh
# Builds a private nginx prefix DIR from the project's nginx files, for `make run` and the tests:
#   sh nginx/mkprefix.sh DIR [NAME=VALUE ...]
#   nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'
# or fills in the site file alone for a system nginx (installed paths as defaults):
#   sh nginx/mkprefix.sh --site /etc/nginx/sites-available/notesd [NAME=VALUE ...]
# Settings (placeholders of notesd-site.conf) and their defaults:
#   LISTEN=127.0.0.1:8080  SERVER_NAME=_  FCGI_UPSTREAM="server unix:DIR/notesd.sock;"
#   FCGI_READ_TIMEOUT=30s  RATE_LIMIT_KEY='""' (off)  RATE_LIMIT=10r/s  RATE_BURST=20
#   ACCESS_LOG=DIR/logs/access.log  NGINX_USER=www-data (only used when run as root)
#   NGINX_DIR=DIR (where notesd-errors.conf is included from; --site: /usr/share/notesd/nginx)
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
    FCGI_UPSTREAM="server unix:/run/notesd/notesd.sock;"
    ACCESS_LOG=/var/log/nginx/notesd.access.log
else
    mkdir -p "$1"
    dir=$(cd "$1" && pwd)
    nginx_dir=$dir
    shift
    FCGI_UPSTREAM="server unix:$dir/notesd.sock;"
    ACCESS_LOG=$dir/logs/access.log
fi

LISTEN=127.0.0.1:8080
SERVER_NAME=_
FCGI_READ_TIMEOUT=30s
RATE_LIMIT_KEY='""'
RATE_LIMIT=10r/s
RATE_BURST=20
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
        FCGI_READ_TIMEOUT) FCGI_READ_TIMEOUT=$value ;;
        RATE_LIMIT_KEY) RATE_LIMIT_KEY=$value ;;
        RATE_LIMIT) RATE_LIMIT=$value ;;
        RATE_BURST) RATE_BURST=$value ;;
        ACCESS_LOG) ACCESS_LOG=$value ;;
        NGINX_USER) NGINX_USER=$value ;;
        NGINX_DIR) nginx_dir=$value ;;
        *) echo "mkprefix.sh: unknown setting '$name'" >&2; exit 2 ;;
    esac
done

# sed replacement text: escape backslash, ampersand and the | delimiter.
esc() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }

render_site() {
    sed -e "s|@LISTEN@|$(esc "$LISTEN")|g" \
        -e "s|@SERVER_NAME@|$(esc "$SERVER_NAME")|g" \
        -e "s|@FCGI_UPSTREAM@|$(esc "$FCGI_UPSTREAM")|g" \
        -e "s|@FCGI_READ_TIMEOUT@|$(esc "$FCGI_READ_TIMEOUT")|g" \
        -e "s|@RATE_LIMIT_KEY@|$(esc "$RATE_LIMIT_KEY")|g" \
        -e "s|@RATE_LIMIT@|$(esc "$RATE_LIMIT")|g" \
        -e "s|@RATE_BURST@|$(esc "$RATE_BURST")|g" \
        -e "s|@ACCESS_LOG@|$(esc "$ACCESS_LOG")|g" \
        -e "s|@NGINX_DIR@|$(esc "$nginx_dir")|g" \
        "$here/notesd-site.conf" > "$1.tmp"
    mv "$1.tmp" "$1"
}

if [ -n "$site_only" ]; then
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

render_site "$dir/notesd-site.conf"
cp "$here/notesd-errors.conf" "$dir/notesd-errors.conf"
sed -e "s|@PREFIX@|$(esc "$dir")|g" \
    -e "s|@USER_DIRECTIVE@|$(esc "$USER_DIRECTIVE")|g" \
    "$here/nginx-standalone.conf.in" > "$dir/nginx.conf.tmp"
mv "$dir/nginx.conf.tmp" "$dir/nginx.conf"
if grep -n '@[A-Z_]*@' "$dir/nginx.conf" "$dir/notesd-site.conf" | grep -v '^[^:]*:[0-9]*:#' >&2; then
    echo "mkprefix.sh: placeholders left unreplaced" >&2
    exit 1
fi
