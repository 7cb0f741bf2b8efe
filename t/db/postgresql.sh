#!/bin/sh
# A throwaway PostgreSQL 15 server for tests, kept entirely inside DIR (cluster, socket, log).
#
#   t/db/postgresql.sh start DIR [PORT]   initialise (first time) and start; prints the notesd
#                                         connection string (also kept in DIR/conn)
#   t/db/postgresql.sh stop DIR           stop and wait until gone (idempotent)
#   t/db/postgresql.sh restart DIR [SECS] stop, wait SECS (default 0), start with the same data
#   t/db/postgresql.sh pause DIR | resume DIR   SIGSTOP / SIGCONT the postmaster and backends
#   t/db/postgresql.sh conn DIR           print the connection string of DIR
#   t/db/postgresql.sh sql DIR [ARGS]     psql as the cluster's superuser (SQL on stdin)
#
# Without PORT the server listens on a unix socket in DIR only (PORT then only names the socket,
# a free one is picked); with PORT (or "auto") also on 127.0.0.1:PORT, and the connection string
# uses TCP. PostgreSQL refuses to run as root: run as root, the cluster belongs to the `postgres`
# user (DIR is made traversable for it; its parents must be already, e.g. mktemp -d + chmod 711).
# NOTESD_DB_MEMORY=SIZE (e.g. 512M, 2G; read at every start) sets shared_buffers for benchmarks,
# with effective_cache_size = 3 x SIZE and work_mem = SIZE / 64 (at least 4MB); unset: the test
# default of shared_buffers = 64MB from postgresql.conf.
# $net and the lists of child pids are split into words on purpose.
# shellcheck disable=SC2086,SC2046
set -eu

die() { echo "postgresql.sh: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 start|stop|restart|pause|resume|conn|sql DIR [PORT|SECS]"
cmd=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
data=$dir/data
run=$dir/run

if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    as_owner() { runuser -u postgres -- "$@"; }
else
    owner=$(id -un)
    as_owner() { "$@"; }
fi

# pg_ctl -o options for NOTESD_DB_MEMORY (empty when unset).
memory_opts() {
    [ -n "${NOTESD_DB_MEMORY:-}" ] || return 0
    mem=$NOTESD_DB_MEMORY
    expr "$mem" : '[1-9][0-9]*[MG]$' > /dev/null || die "NOTESD_DB_MEMORY=$mem: use e.g. 512M or 2G"
    mb=${mem%?}
    [ "${mem#"$mb"}" = G ] && mb=$((mb * 1024))
    work=$((mb / 64))
    [ "$work" -ge 4 ] || work=4
    echo "-c shared_buffers=${mb}MB -c effective_cache_size=$((mb * 3))MB -c work_mem=${work}MB"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The postmaster's pid, only if it is alive and really serves this DIR.
server_pid() {
    [ -s "$data/postmaster.pid" ] || return 1
    pid=$(head -1 "$data/postmaster.pid")
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$data" || return 1
    echo "$pid"
}

client() { as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$run" -p "$(cat "$dir/port")" -U postgres "$@"; }

write_conn() {
    pw=$(cat "$dir/password")
    port=$(cat "$dir/port")
    if [ -s "$dir/tcp" ]; then host=127.0.0.1; else host=$run; fi
    echo "postgresql://dbname=notesd user=notesd password=$pw host=$host port=$port" > "$dir/conn"
}

init() {
    [ -f "$data/PG_VERSION" ] && return 0
    if [ "$owner" = postgres ]; then
        chmod 711 "$dir"
        as_owner test -x "$dir" || die "user postgres cannot reach $dir: make its parents traversable (chmod 711)"
    fi
    rm -rf "$data" "$run"
    mkdir -p "$data" "$run"
    chown "$owner" "$data" "$run"
    od -An -N12 -tx1 /dev/urandom | tr -d ' \n' > "$dir/password"
    echo >> "$dir/password"
    # initdb reads the superuser's password from a file the owner can read; it is removed after.
    pwfile=$data.pw
    cp "$dir/password" "$pwfile"
    chown "$owner" "$pwfile"
    as_owner "$bin/initdb" -D "$data" -U postgres --pwfile="$pwfile" -A scram-sha-256 \
        -E UTF8 --locale=C.UTF-8 --no-sync > "$dir/initdb.log" 2>&1 ||
        { rm -f "$pwfile"; cat "$dir/initdb.log" >&2; die "initdb failed"; }
    rm -f "$pwfile"
    port=${1:-}
    if [ -n "$port" ]; then
        [ "$port" = auto ] && port=$(free_port)
        echo "$port" > "$dir/port"
        echo 1 > "$dir/tcp"
        listen=127.0.0.1
    else
        free_port > "$dir/port"
        : > "$dir/tcp"
        listen=
    fi
    # Durability is traded for speed: this is a test server.
    cat >> "$data/postgresql.conf" <<CONF
listen_addresses = '$listen'
port = $(cat "$dir/port")
unix_socket_directories = '$run'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
max_connections = 200
logging_collector = off
CONF
    echo fresh > "$dir/.fresh"
}

start() {
    if server_pid > /dev/null; then write_conn; cat "$dir/conn"; return 0; fi
    opts=$(memory_opts)
    init "${1:-}"
    as_owner "$bin/pg_ctl" -D "$data" -l "$run/server.log" -o "$opts" -w -t 20 start > /dev/null ||
        { tail -20 "$run/server.log" >&2; die "server did not start"; }
    if [ -f "$dir/.fresh" ]; then
        pw=$(cat "$dir/password")
        PGPASSWORD=$pw client -d postgres <<SQL
CREATE ROLE notesd LOGIN PASSWORD '$pw';
CREATE DATABASE notesd OWNER notesd ENCODING 'UTF8' TEMPLATE template0;
SQL
        rm -f "$dir/.fresh"
    fi
    write_conn
    cat "$dir/conn"
}

# The processes the postmaster forked (backends, checkpointer, ...), without procps.
children() {
    for st in /proc/[0-9]*/stat; do
        read -r cpid _ _ ppid _ < "$st" 2> /dev/null || continue
        [ "$ppid" = "$1" ] && echo "$cpid"
    done
}

stop() {
    pid=$(server_pid) || return 0
    kill -CONT "$pid" $(children "$pid") 2> /dev/null || true
    as_owner "$bin/pg_ctl" -D "$data" -m fast -w -t 15 stop > /dev/null 2>&1 ||
        as_owner "$bin/pg_ctl" -D "$data" -m immediate -w -t 10 stop > /dev/null 2>&1 || true
    i=0
    while kill -0 "$pid" 2> /dev/null; do
        i=$((i + 1))
        [ $i -eq 50 ] && kill -KILL "$pid" $(children "$pid") 2> /dev/null
        sleep 0.1
    done
}

# The postmaster and every backend it forked.
signal_all() {
    pid=$(server_pid) || die "not running"
    kill "-$1" "$pid" $(children "$pid") 2> /dev/null || true
}

case $cmd in
    start) start "${3:-}" ;;
    stop) stop ;;
    restart) stop; sleep "${3:-0}"; start ;;
    pause) signal_all STOP ;;
    resume) signal_all CONT ;;
    conn) [ -s "$dir/conn" ] || die "never started"; cat "$dir/conn" ;;
    sql) shift 2; PGPASSWORD=$(cat "$dir/password") client "$@" ;;
    *) die "unknown command $cmd" ;;
esac
