"""The archive on PostgreSQL: ``PgArchive`` (sessions, messages, the JSONL import) and
``PgIndexes`` (what ``memory.archive.search.Searcher`` reads through it), for
``storage.backend: postgres``. Only code that chose PostgreSQL imports this package, so a
SQLite-only install never imports asyncpg.

The contract is SQLite's (``memory.archive.store``), tested on both by one suite
(``tests/memory/archive/test_backends.py``). What differs, and why:

* Scoping is the ``session_people`` join alone, in every statement (``VISIBLE``): there are
  no scope tokens inside the indexes. SQLite puts them there so that FTS5 can intersect
  them before bm25 ranks; PostgreSQL's planner joins a GIN bitmap with the viewer's
  sessions itself. The join is what decides on SQLite too; a token could only hide.
* Ranking is ``ts_rank`` (length-normalised), not bm25: the cascade (all words, then any
  word, then substrings), the grouping by lineage, ``hits_per_session``, the windows and
  the sorts are the shared ``Searcher``'s, so they behave the same; scores do not match
  number for number. Snippets are ``ts_headline`` with ``[`` ``]`` around the matches.
* Words: the ``english`` configuration (Snowball stemming, which joins at least the forms
  Porter does; English stop words are left out of the index and of queries, which
  ``parse_query`` drops anyway). Names and numbers go through the same configuration (a
  name is stemmed alike in the text and in the query, numbers stay whole): a second
  ``simple`` vector would double the index for what the substring step already finds.
  Diacritics are kept (``café`` is not ``cafe``): folding them needs the ``unaccent``
  extension and an immutable wrapper to be usable in a generated column.
* Several replicas write at once: an exchange locks its session's row for its transaction,
  so exchanges into one session follow one another and its message ids keep its order.
* Substrings: ``pg_trgm`` with ``ILIKE`` (case folded beyond ASCII, unlike SQLite's LIKE).
  A 1- or 2-character CJK term has no trigram: the ``grams`` array (``memory.archive.cjk``,
  the same grams as SQLite's ``messages_cjk``) under GIN serves it.
* ``text`` cannot hold NUL: a NUL in a message is stored as U+FFFD.
* Reads under ``read_deadline`` are cancelled on the server (asyncpg ``timeout``) and raise
  ``TimeoutError`` where SQLite raises ``sqlite3.OperationalError: interrupted``.
* ``check`` has no index to compare with its table (``search_text`` and ``words`` are
  generated columns); it checks the CJK grams and the session counters, ``repair`` rewrites
  them.
* ``restore`` copies a session whole, every id kept (``mnemo storage migrate``): the
  JSONL export keeps only what a person said and was told.
* The fusion seam (``SemanticRanker``) works as on SQLite (``PgIndexes.by_id``), but the
  only ranker there is, the local provider, keeps its vectors in SQLite for now.
"""

from __future__ import annotations

from memory.archive.postgres.archive import PgArchive
from memory.archive.postgres.indexes import PgIndexes
from memory.archive.postgres.restore import Present, RestoreConflict, present, restore_session
from memory.archive.postgres.schema import MIGRATIONS, migrate

__all__ = [
    "MIGRATIONS",
    "PgArchive",
    "PgIndexes",
    "Present",
    "RestoreConflict",
    "migrate",
    "present",
    "restore_session",
]
