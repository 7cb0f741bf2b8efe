-- notesd schema 005 for SQLite: search snapshots live in a file of their own.
--
-- Every search writes a snapshot. In the main file each of those commits made every other
-- connection discard its page cache (SQLite resets it when the WAL has changed since its last
-- read), so the workers re-read the postings and notes pages of every search through the
-- kernel. The store now attaches FILE-snapshots as `snap` on every connection and creates
-- snap.snapshots there (dialect.cpp); the main file's table goes. Snapshots open during the
-- upgrade are lost: clients get the documented 404 and search again.

DROP TABLE main.snapshots;
