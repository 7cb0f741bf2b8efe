#!/bin/bash
# `make run`: the API on http://127.0.0.1:$PORT, notesd's pool and nginx in the foreground.
#   tools/run.sh BUILDDIR SRCDIR        (make run [PORT=8080] [NOTESD_DB=sqlite3://db=...])
# State that survives runs (SQLite database, signing secret) lives in $NOTESD_RUN_DIR (default
# SRCDIR/_run); the socket, config and nginx prefix live in a temp dir removed at exit.
# A database without users gets the user "demo" and generated notes; every run prints a fresh
# token for it and a curl command. Ctrl-C (or SIGTERM) stops both servers.
# make runs it with $(SHELL), i.e. /bin/sh: it needs bash (wait -n).
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -euo pipefail

usage() { echo "usage: $0 BUILDDIR SRCDIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
PORT=${PORT:-8080}
state=${NOTESD_RUN_DIR:-$srcdir/_run}
NOTESD_DB=${NOTESD_DB:-sqlite3://db=$state/notes.db}
WORKERS=${WORKERS:-4}
export NOTESD_DB  # notesd and notesctl both honour it

notesd=$builddir/notesd
notesctl=$builddir/notesctl
for b in "$notesd" "$notesctl"; do
    [ -x "$b" ] || { echo "run.sh: $b is not built (run make first)" >&2; exit 1; }
done
nginx=$(command -v nginx || true)
[ -n "$nginx" ] || nginx=/usr/sbin/nginx
[ -x "$nginx" ] || { echo "run.sh: nginx not found (apt-get install nginx-light)" >&2; exit 1; }
case $PORT in ''|*[!0-9]*) echo "run.sh: PORT must be a number" >&2; exit 2 ;; esac

mkdir -p "$state"
chmod 0700 "$state"
secret=$state/secret
if [ ! -s "$secret" ]; then
    (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$secret.tmp" && mv "$secret.tmp" "$secret")
fi

# The socket and nginx's files: a private dir under /tmp, reachable by nginx's workers
# (see nginx/nginx-standalone.conf.in), never under a home directory they cannot enter.
rt=$(mktemp -d "${TMPDIR:-/tmp}/notesd-run.XXXXXX")
notesd_pid=
nginx_pid=
cleanup() {
    trap - INT TERM EXIT
    [ -n "$nginx_pid" ] && kill -QUIT "$nginx_pid" 2>/dev/null || true
    [ -n "$notesd_pid" ] && kill -TERM "$notesd_pid" 2>/dev/null || true
    [ -n "$nginx_pid" ] && wait "$nginx_pid" 2>/dev/null || true
    [ -n "$notesd_pid" ] && wait "$notesd_pid" 2>/dev/null || true
    rm -rf "$rt"
}
trap cleanup EXIT
trap 'echo; echo "stopping..." >&2; exit 0' INT TERM HUP

# nginx as in production (nginx/notesd-site.conf): the pool's queue sized by the sizing rule
# (README "nginx as the shield"), and as many descriptors as the hard limit allows for its
# connections (nginx raises it further itself when run as root).
[ -f "$builddir/doc/openapi.json" ] || { echo "run.sh: $builddir/doc/openapi.json is not built (run make first)" >&2; exit 1; }
sh "$srcdir/nginx/mkprefix.sh" "$rt" "LISTEN=127.0.0.1:$PORT" "POOL_MAX_CONNS=$((16 * WORKERS))" \
    "OPENAPI_JSON=$builddir/doc/openapi.json"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
cat > "$rt/notesd.conf" <<EOF
# written by tools/run.sh
listen = $rt/notesd.sock
listen_mode = 0660
workers = $WORKERS
db = $NOTESD_DB
secret_file = $secret
pid_file = $rt/notesd.pid
log_level = info
EOF
"$notesd" --config "$rt/notesd.conf" --check-config >/dev/null

"$notesctl" migrate >/dev/null
users=$("$notesctl" user list | tail -n +2)
if [ -z "$users" ]; then
    echo "empty database: adding the user demo with generated notes..." >&2
    "$notesctl" user add demo >/dev/null
    "$notesctl" demo demo >&2
    users=$("$notesctl" user list | tail -n +2)
fi
user=$(printf '%s\n' "$users" | awk '$2 == "demo" { print $2; exit }')
[ -n "$user" ] || user=$(printf '%s\n' "$users" | awk 'NR == 1 { print $2 }')
token=$("$notesctl" token create "$user" --label "make run" 2>/dev/null | tail -n 1)

# Both servers get sessions of their own: Ctrl-C reaches only this script, which then stops
# each once, gracefully (a second SIGTERM would make notesd kill its workers at once).
setsid "$notesd" --config "$rt/notesd.conf" &
notesd_pid=$!
for _ in $(seq 100); do
    [ -S "$rt/notesd.sock" ] && break
    kill -0 "$notesd_pid" 2>/dev/null || { echo "run.sh: notesd did not start" >&2; exit 1; }
    sleep 0.1
done
setsid "$nginx" -p "$rt" -c "$rt/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
url="http://127.0.0.1:$PORT/v2/notes?limit=5"
ready=
for _ in $(seq 100); do
    if status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url"); then
        ready=$status
        break
    fi
    kill -0 "$nginx_pid" 2>/dev/null || {
        echo "run.sh: nginx did not start (is port $PORT taken? try make run PORT=...)" >&2
        cat "$rt/logs/error.log" >&2 2>/dev/null || true
        exit 1
    }
    sleep 0.1
done

cat <<EOF

notesd is serving http://127.0.0.1:$PORT/v2 (database: $NOTESD_DB, user: $user)
  token: $token
  try:   curl -s -H "Authorization: Bearer $token" '$url'
  write: curl -s -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \\
           -d '{"content": "# Hello notesd\\n\\nMy first note, written over the API."}' \\
           http://127.0.0.1:$PORT/v2/notes
  find:  curl -s -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \\
           -d '{"query": "first note"}' http://127.0.0.1:$PORT/v2/notes/search
  status: curl -s http://127.0.0.1:$PORT/notesd-status  (or ?format=prometheus)
  API:   http://127.0.0.1:$PORT/v2/openapi.json (OpenAPI 3.1, no token needed)
  logs:  notesd below; nginx in $rt/logs/
  first request answered: HTTP ${ready:-none}
Press Ctrl-C to stop.

EOF

# Either server ending on its own ends the run (and stops the other).
wait -n "$notesd_pid" "$nginx_pid" || true
echo "run.sh: a server exited; stopping" >&2
exit 1
