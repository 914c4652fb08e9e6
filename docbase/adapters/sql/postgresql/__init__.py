"""PostgreSQL's engine package: its engine object (:mod:`.engine`) and the modules behind it.

- :mod:`.engine`: :class:`~.engine.PostgresEngine`, the one object the generic SQL
  modules ask (its traits, how its engine is made, its functions, its short ways);
- :mod:`.dialect`: the SQL PostgreSQL spells its own way (``json``/``jsonb``), with
  :mod:`.order` (native sort parts), :mod:`.regex` (``$regex`` translated) and
  :mod:`.items` (item indexes);
- :mod:`.functions`: docbase's SQL functions, installed in the database by migrations;
- :mod:`.connections`, :mod:`.point_reads`, :mod:`.inserts`: asyncpg connections of the
  process's own, and the reads and writes that go through them past SQLAlchemy.

Only ``backend.dialect_for`` names this package, by string (docs/sql-adapter.md): a
SQLite store never loads it, nor SQLAlchemy's PostgreSQL dialect (~2 MiB).
"""
