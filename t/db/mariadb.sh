#!/bin/sh
# A throwaway MariaDB server for tests, kept entirely inside DIR (data, socket, log, pid).
#
#   t/db/mariadb.sh start DIR [PORT]   initialise (first time) and start; prints the notesd
#                                      connection string (also kept in DIR/conn)
#   t/db/mariadb.sh stop DIR           stop and wait until gone (idempotent)
#   t/db/mariadb.sh restart DIR [SECS] stop, wait SECS (default 0), start again with the same data
#   t/db/mariadb.sh pause DIR | resume DIR   SIGSTOP / SIGCONT the server (a hung database)
#   t/db/mariadb.sh conn DIR           print the connection string of DIR
#   t/db/mariadb.sh sql DIR [ARGS]     the mariadb client as the server's root (SQL on stdin)
#
# Without PORT the server listens on DIR/mysqld.sock only; with PORT (or "auto" for a free one)
# also on 127.0.0.1:PORT, and the connection string uses TCP. The port is kept for restarts.
# No systemd, no /etc/mysql (every program runs with --no-defaults). Run as root, the server
# runs as root too (--user=root): nothing needs to be chown'd.
# NOTESD_DB_MEMORY=SIZE (e.g. 512M, 2G; read at every start) sizes the InnoDB buffer pool for
# benchmarks and raises the redo log to 512M; unset: the test default of 64M (log 32M).
# $net and the lists of child pids are split into words on purpose.
# shellcheck disable=SC2086,SC2046
set -eu

die() { echo "mariadb.sh: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 start|stop|restart|pause|resume|conn|sql DIR [PORT|SECS]"
cmd=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
sock=$dir/mysqld.sock
pidf=$dir/mysqld.pid
[ ${#sock} -lt 100 ] || die "DIR path too long for a unix socket: $dir"

user_opt=
[ "$(id -u)" -eq 0 ] && user_opt=--user=root

pool=${NOTESD_DB_MEMORY:-64M}
expr "$pool" : '[1-9][0-9]*[MG]$' > /dev/null || die "NOTESD_DB_MEMORY=$pool: use e.g. 512M or 2G"
redo=32M
[ -n "${NOTESD_DB_MEMORY:-}" ] && redo=512M

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The pid of our server, only if it is alive and really serves this DIR.
server_pid() {
    [ -s "$pidf" ] || return 1
    pid=$(cat "$pidf")
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "--datadir=$dir/data" || return 1
    echo "$pid"
}

client() { mariadb --no-defaults --protocol=socket --socket="$sock" -uroot "$@"; }

write_conn() {
    pw=$(cat "$dir/password")
    if [ -s "$dir/port" ]; then
        echo "mysql://db=notesd user=notesd password=$pw host=127.0.0.1 port=$(cat "$dir/port") charset=utf8mb4" > "$dir/conn"
    else
        echo "mysql://db=notesd user=notesd password=$pw unix_socket=$sock charset=utf8mb4" > "$dir/conn"
    fi
}

init() {
    [ -d "$dir/data/mysql" ] && return 0
    rm -rf "$dir/data"
    mariadb-install-db --no-defaults $user_opt --datadir="$dir/data" \
        --auth-root-authentication-method=normal --skip-test-db > "$dir/install.log" 2>&1 ||
        { cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
    od -An -N12 -tx1 /dev/urandom | tr -d ' \n' > "$dir/password"
    echo >> "$dir/password"
    printf %s "${1:-}" > "$dir/port"
    echo fresh > "$dir/.fresh"
}

start() {
    if server_pid > /dev/null; then write_conn; cat "$dir/conn"; return 0; fi
    port=${1:-}
    [ "$port" = auto ] && port=$(free_port)
    init "$port"
    port=$(cat "$dir/port")
    if [ -n "$port" ]; then net="--port=$port --bind-address=127.0.0.1"; else net=--skip-networking; fi
    rm -f "$sock" "$pidf"
    # Durability is traded for speed: this is a test server.
    mariadbd --no-defaults $user_opt --datadir="$dir/data" --socket="$sock" --pid-file="$pidf" \
        --log-error="$dir/mysqld.log" $net --skip-name-resolve --skip-log-bin \
        --innodb-buffer-pool-size=$pool --innodb-log-file-size=$redo \
        --innodb-flush-log-at-trx-commit=2 --innodb-doublewrite=0 --sync-binlog=0 \
        --max-connections=300 --performance-schema=OFF < /dev/null > /dev/null 2>&1 &
    i=0
    while ! client -e 'SELECT 1' > /dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 200 ]; then tail -20 "$dir/mysqld.log" >&2; die "server did not start"; fi
        if ! kill -0 $! 2> /dev/null; then tail -20 "$dir/mysqld.log" >&2; die "server exited"; fi
        sleep 0.1
    done
    if [ -f "$dir/.fresh" ]; then
        pw=$(cat "$dir/password")
        # The database default is what the README tells users to create; the migrations name
        # their character sets and collations anyway.
        client <<SQL
CREATE DATABASE notesd CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER 'notesd'@'localhost' IDENTIFIED BY '$pw';
CREATE USER 'notesd'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON notesd.* TO 'notesd'@'localhost';
GRANT ALL PRIVILEGES ON notesd.* TO 'notesd'@'127.0.0.1';
SQL
        rm -f "$dir/.fresh"
    fi
    write_conn
    cat "$dir/conn"
}

stop() {
    pid=$(server_pid) || { rm -f "$pidf"; return 0; }
    kill -CONT "$pid" 2> /dev/null || true
    kill -TERM "$pid" 2> /dev/null || true
    i=0
    while kill -0 "$pid" 2> /dev/null; do
        i=$((i + 1))
        [ $i -eq 150 ] && kill -KILL "$pid" 2> /dev/null
        sleep 0.1
    done
    rm -f "$pidf" "$sock"
}

case $cmd in
    start) start "${3:-}" ;;
    stop) stop ;;
    restart) stop; sleep "${3:-0}"; start ;;
    pause) pid=$(server_pid) || die "not running"; kill -STOP "$pid" ;;
    resume) pid=$(server_pid) || die "not running"; kill -CONT "$pid" ;;
    conn) [ -s "$dir/conn" ] || die "never started"; cat "$dir/conn" ;;
    sql) shift 2; client "$@" ;;
    *) die "unknown command $cmd" ;;
esac
