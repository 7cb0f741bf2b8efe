"""Database servers for the end-to-end tests: fresh databases on a MariaDB/MySQL or PostgreSQL
server, their clients (mariadb/psql, mariadb-dump/pg_dump), and backend-neutral checks.

The e2e suite runs on a server when NOTESD_E2E_DB is `mysql` or `postgresql`; the server is the
one of NOTESD_TEST_MYSQL / NOTESD_TEST_PGSQL (a notesd connection string whose user may create
databases: on MariaDB `GRANT ALL ON \\`notesd\\_%\\`.* TO ...`, on PostgreSQL `ALTER ROLE ...
CREATEDB`). Every Stack then gets a database of its own (ServerDatabase), dropped at stop.
"""
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time

ADMIN_ENV = {"mysql": "NOTESD_TEST_MYSQL", "postgresql": "NOTESD_TEST_PGSQL"}
SCHEMES = {"sqlite3": "sqlite", "sqlite": "sqlite", "mysql": "mysql", "mariadb": "mysql",
           "postgresql": "postgresql", "postgres": "postgresql"}
MYSQL_DB_KEYS = ("db", "dbname", "database")
DB_SCRIPTS = {"mysql": "mariadb.sh", "postgresql": "postgresql.sh"}
SRCDIR = os.path.abspath(os.environ.get("NOTESD_SRCDIR")
                         or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class ServerError(RuntimeError):
    """A database server did not answer or refused a statement (message: the client's output)."""


def e2e_backend():
    """The backend the e2e stacks use by default: sqlite, mysql or postgresql."""
    b = os.environ.get("NOTESD_E2E_DB", "").strip().lower() or "sqlite"
    b = {"sqlite3": "sqlite", "mariadb": "mysql", "pgsql": "postgresql"}.get(b, b)
    if b not in ("sqlite", "mysql", "postgresql"):
        raise ServerError("NOTESD_E2E_DB=%s: use sqlite, mysql or postgresql" % b)
    return b


def parse_conn(conn):
    """(backend, [(key, value)]) of a notesd connection string; a plain path is SQLite."""
    scheme, sep, rest = conn.partition("://")
    if not sep:
        return "sqlite", [("db", conn)]
    backend = SCHEMES.get(scheme)
    if backend is None:
        raise ServerError("unknown database scheme in %r" % scheme)
    pairs = []
    for token in shlex.split(rest):
        key, _, value = token.partition("=")
        pairs.append((key, value))
    return backend, pairs


def format_conn(backend, pairs):
    scheme = {"mysql": "mysql", "postgresql": "postgresql", "sqlite": "sqlite3"}[backend]
    return scheme + "://" + " ".join(
        "%s=%s" % (k, "'%s'" % v if (" " in v or not v) else v) for k, v in pairs)


def with_database(conn, name):
    """conn naming database `name` instead of its own."""
    backend, pairs = parse_conn(conn)
    keys = MYSQL_DB_KEYS if backend == "mysql" else ("dbname",)
    pairs = [(k, v) for k, v in pairs if k not in keys]
    return format_conn(backend, [(keys[0], name)] + pairs)


def database_of(conn):
    backend, pairs = parse_conn(conn)
    keys = MYSQL_DB_KEYS if backend == "mysql" else ("dbname", "db")
    for k, v in pairs:
        if k in keys:
            return v
    return ""


def _tool(*names):
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    raise ServerError("none of %s found (apt-get install mariadb-client postgresql-client)"
                      % ", ".join(names))


def _mysql_args(pairs):
    """(command-line options, environment) reaching the MariaDB server of `pairs`."""
    d = dict(pairs)
    args = ["--user=" + d.get("user", "root"), "--default-character-set=utf8mb4"]
    if d.get("unix_socket"):
        args += ["--protocol=socket", "--socket=" + d["unix_socket"]]
    else:
        args += ["--protocol=tcp", "--host=" + d.get("host", "127.0.0.1"),
                 "--port=" + d.get("port", "3306")]
    env = dict(os.environ)
    password = d.get("password", d.get("pass", ""))
    if password:
        env["MYSQL_PWD"] = password  # not on the command line, where ps shows it
    return args, env


def _pg_conninfo(pairs, dbname=None):
    """A libpq conninfo string (without our own `timeout=`), and an environment."""
    env = dict(os.environ)
    out = []
    for k, v in pairs:
        if k == "timeout":
            continue
        if k == "password":
            env["PGPASSWORD"] = v
            continue
        if k == "dbname" and dbname is not None:
            v = dbname
        out.append("%s='%s'" % (k, v.replace("\\", "\\\\").replace("'", "\\'")))
    return " ".join(out), env


def client_sql(conn, sql, database=None, timeout=60):
    """Runs `sql` with the server's command-line client on conn's server (in `database`, by
    default conn's own); returns its tab-separated output. Raises ServerError on failure."""
    backend, pairs = parse_conn(conn)
    if backend == "mysql":
        args, env = _mysql_args(pairs)
        cmd = [_tool("mariadb", "mysql"), "--no-defaults", "--batch", "--skip-column-names"]
        cmd += args + [database if database is not None else database_of(conn)]
    elif backend == "postgresql":
        info, env = _pg_conninfo(pairs, database)
        cmd = [_tool("psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
               "-d", info]
    else:
        raise ServerError("not a database server: %s" % backend)
    try:
        p = subprocess.run(cmd, input=sql, capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ServerError("%s server did not answer within %d s" % (backend, timeout))
    if p.returncode != 0:
        raise ServerError("%s client failed (%d): %s" % (backend, p.returncode,
                                                         (p.stderr or p.stdout).strip()[-1500:]))
    return p.stdout


def dump(conn, timeout=120):
    """Every table of conn's database as the server's dump tool writes it (bytes)."""
    backend, pairs = parse_conn(conn)
    if backend == "mysql":
        args, env = _mysql_args(pairs)
        cmd = [_tool("mariadb-dump", "mysqldump"), "--no-defaults", "--no-tablespaces",
               "--skip-comments", "--single-transaction", "--hex-blob"] + args
        cmd.append(database_of(conn))
    elif backend == "postgresql":
        info, env = _pg_conninfo(pairs)
        cmd = [_tool("pg_dump"), "--no-owner", "-d", info]
    else:
        raise ServerError("not a database server: %s" % backend)
    p = subprocess.run(cmd, capture_output=True, env=env, timeout=timeout)
    if p.returncode != 0 or not p.stdout:
        raise ServerError("%s dump failed (%d): %s" % (
            backend, p.returncode, p.stderr.decode(errors="replace")[-1500:]))
    return p.stdout


def integrity_problems(conn):
    """What the database's own checker finds wrong in conn's database ([] when sound).

    MariaDB: CHECK TABLE on every table. PostgreSQL has no built-in checker for tables (amcheck
    needs a superuser): every row of every table must read back in a full dump. Foreign keys
    are enforced by both servers at all times."""
    backend, _ = parse_conn(conn)
    if backend == "mysql":
        tables = client_sql(conn, "SHOW TABLES").split()
        if not tables:
            return ["no tables"]
        out = client_sql(conn, "CHECK TABLE %s EXTENDED" % ", ".join("`%s`" % t for t in tables))
        problems = []
        for line in out.splitlines():
            fields = line.split("\t")  # Table, Op, Msg_type, Msg_text
            if len(fields) != 4:
                problems.append(line)
            elif fields[2] in ("error", "warning") or (fields[2] == "status" and fields[3] != "OK"):
                problems.append(line)
        return problems
    dump(conn)
    return []


class ServerDatabase:
    """A fresh database on the server of `admin_conn`; .conn is notesd's connection string to it.

    The name is registered in NOTESD_E2E_REGISTRY (a file db.<name>) so that t/run_tests.py
    drops it if the test process dies before drop()."""

    def __init__(self, admin_conn):
        self.backend, _ = parse_conn(admin_conn)
        if self.backend == "sqlite":
            raise ServerError("not a database server connection string")
        self.admin_conn = admin_conn
        self.name = "notesd_e2e_" + os.urandom(6).hex()
        self.conn = with_database(admin_conn, self.name)
        self._registered = None
        self._register()
        try:
            if self.backend == "mysql":
                client_sql(admin_conn, "CREATE DATABASE `%s` CHARACTER SET utf8mb4 "
                                       "COLLATE utf8mb4_bin" % self.name)
            else:
                client_sql(admin_conn, "CREATE DATABASE %s ENCODING 'UTF8' TEMPLATE template0"
                           % self.name)
        except ServerError as e:
            self._unregister()
            raise ServerError("cannot create a test database on the server of %s: %s (the user "
                              "needs CREATE and DROP on databases named notesd_e2e_*)"
                              % (os.environ.get(ADMIN_ENV[self.backend], "?"), e))

    def _register(self):
        reg = os.environ.get("NOTESD_E2E_REGISTRY")
        if reg:
            self._registered = os.path.join(reg, "db." + self.name)
            with open(self._registered, "w") as f:
                json.dump({"admin": self.admin_conn, "name": self.name}, f)

    def _unregister(self):
        if self._registered and os.path.exists(self._registered):
            os.unlink(self._registered)
        self._registered = None

    def drop(self):
        """Drops the database (connections still open to it are ended)."""
        if self.name is None:
            return
        drop_database(self.admin_conn, self.name)
        self._unregister()
        self.name = None


def drop_database(admin_conn, name):
    backend, _ = parse_conn(admin_conn)
    if backend == "mysql":
        client_sql(admin_conn, "DROP DATABASE IF EXISTS `%s`" % name)
    else:
        # FORCE ends the sessions of our role; an autovacuum worker on the database it may not
        # end (PostgreSQL refuses: "must be a member of the role..."), and that worker is gone
        # a moment later, so the drop is retried for a few seconds.
        for attempt in range(50):
            try:
                client_sql(admin_conn, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)
                return
            except ServerError as e:
                if "must be a member of the role" not in str(e) or attempt == 49:
                    raise
                time.sleep(0.1)


def drop_registered(path):
    """Drops the database a registry file db.<name> names (for t/run_tests.py's clean-up)."""
    with open(path) as f:
        entry = json.load(f)
    drop_database(entry["admin"], entry["name"])


class ThrowawayServer:
    """A database server of `backend` in a temp dir of its own (t/db/mariadb.sh or
    postgresql.sh), for tests that stop, restart or pause it without disturbing the shared test
    servers. .conn is notesd's connection string to its database `notesd`."""

    def __init__(self, backend):
        self.backend = backend
        self.script = os.path.join(SRCDIR, "t", "db", DB_SCRIPTS[backend])
        self.dir = tempfile.mkdtemp(prefix="notesd-db-")
        os.chmod(self.dir, 0o711)  # PostgreSQL runs as `postgres` when we are root
        try:
            self.conn = self.run("start", timeout=120).strip().splitlines()[-1]
        except BaseException:
            self.close()
            raise

    def run(self, *args, timeout=60, input=None):
        """t/db/<script> ARGS[0] DIR ARGS[1:] (input: SQL for `sql`); returns its output."""
        p = subprocess.run(["sh", self.script, args[0], self.dir] + [str(a) for a in args[1:]],
                           capture_output=True, text=True, timeout=timeout, input=input,
                           stdin=None if input is not None else subprocess.DEVNULL)
        if p.returncode != 0:
            raise ServerError("%s %s failed: %s" % (os.path.basename(self.script), args[0],
                                                    (p.stderr or p.stdout)[-2000:]))
        return p.stdout

    def sql(self, text, *client_args):
        """Runs SQL as the server's superuser (client_args: more options of its client);
        returns the client's output."""
        return self.run("sql", *client_args, input=text)

    def close(self):
        try:
            self.run("stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
