"""SQLite's engine package: its engine object (:mod:`.engine`) and the modules behind it.

- :mod:`.engine`: :class:`~.engine.SqliteEngine`, the one object the generic SQL modules
  ask (its traits, how its engine is made and its connections set up);
- :mod:`.dialect`: the SQL SQLite spells its own way (JSON1 plus docbase's functions);
- :mod:`.functions`: docbase's SQL functions, in Python, registered on each connection;
- :mod:`.items`: item indexes (a table of array elements kept by triggers).

Only ``backend.dialect_for`` names this package, by string (docs/sql-adapter.md).
"""
