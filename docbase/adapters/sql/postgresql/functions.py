"""The SQL functions the adapter installs in PostgreSQL (migration 1).

They mirror :mod:`.order_keys` and ``docbase.core.evaluate.path_values`` /
``reached_values`` (walking a path through arrays), so that every query stays in SQL.
The path functions are ``STRICT``, which keeps PostgreSQL from inlining them into every
query that mentions them: they run only for documents whose path meets an array, and
inlined, their recursive bodies cost each query's planning several milliseconds.
``docbase_sort_item`` picks the item a sort on an array orders by (least or greatest).
Key functions are ``IMMUTABLE`` so that expression indexes can use them; the scalar
parts are plain SQL functions, which the planner inlines. Path functions exist for
``jsonb`` (fast, used for scalar conditions) and ``json`` (object key order kept, used
wherever objects are compared or ordered).
"""

from __future__ import annotations

KEY_FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION docbase_number_key(x float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN x = 0 THEN '8000000000000000'
    WHEN x > 0 THEN translate(substr(encode(float8send(x), 'hex'), 1, 1), '01234567', '89abcdef')
                    || substr(encode(float8send(x), 'hex'), 2)
    ELSE translate(encode(float8send(x), 'hex'), '0123456789abcdef', 'fedcba9876543210')
  END
$$;

CREATE OR REPLACE FUNCTION docbase_escape(s text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT replace(replace(s, chr(2), chr(2) || chr(3)), chr(1), chr(2) || chr(2))
$$;

CREATE OR REPLACE FUNCTION docbase_container_key(v json) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  result text;
  k text;
  item json;
BEGIN
  IF json_typeof(v) = 'object' THEN
    result := '4';
    FOR k, item IN SELECT e.key, e.value FROM json_each(v) AS e LOOP
      result := result || '+' || docbase_escape(k) || chr(1) || docbase_key(item);
    END LOOP;
  ELSE
    result := '5';
    FOR item IN SELECT e.value FROM json_array_elements(v) AS e LOOP
      result := result || docbase_key(item);
    END LOOP;
  END IF;
  RETURN result || chr(1);
END
$$;

CREATE OR REPLACE FUNCTION docbase_key(v json) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE json_typeof(v)
    WHEN 'number' THEN '2' || docbase_number_key((v #>> '{}')::float8)
    WHEN 'string' THEN '3' || docbase_escape(v #>> '{}') || chr(1)
    WHEN 'boolean' THEN CASE WHEN (v #>> '{}') = 'true' THEN '61' ELSE '60' END
    WHEN 'object' THEN docbase_container_key(v)
    WHEN 'array' THEN docbase_container_key(v)
    ELSE '1'
  END
$$;

CREATE OR REPLACE FUNCTION docbase_scalar_key(v jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(v)
    WHEN 'number' THEN '2' || docbase_number_key(v::float8)
    WHEN 'string' THEN '3' || docbase_escape(v #>> '{}') || chr(1)
    WHEN 'boolean' THEN CASE WHEN v = 'true'::jsonb THEN '61' ELSE '60' END
    WHEN 'object' THEN '4'
    WHEN 'array' THEN '5'
    ELSE '1'
  END
$$;
"""

_PATH_TEMPLATE = r"""
CREATE OR REPLACE FUNCTION docbase_path_values_{T}(v {T}, path text[])
RETURNS TABLE(value {T}) LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  WITH RECURSIVE walk(depth, val) AS (
    SELECT 0, v WHERE v IS NOT NULL
    UNION ALL
    SELECT w.depth + 1, x.val
    FROM walk AS w
    CROSS JOIN LATERAL (
      SELECT w.val -> path[w.depth + 1] WHERE {T}_typeof(w.val) = 'object'
      UNION ALL
      SELECT w.val -> (CASE WHEN path[w.depth + 1] ~ '^(0|[1-9][0-9]{{0,8}})$'
                            THEN path[w.depth + 1]::int END)
      WHERE {T}_typeof(w.val) = 'array'
      UNION ALL
      SELECT e.value -> path[w.depth + 1]
      FROM {T}_array_elements(CASE WHEN {T}_typeof(w.val) = 'array' THEN w.val END) AS e
      WHERE {T}_typeof(e.value) = 'object'
    ) AS x(val)
    WHERE w.depth < cardinality(path) AND x.val IS NOT NULL
  )
  SELECT walk.val FROM walk WHERE walk.depth = cardinality(path)
$$;

CREATE OR REPLACE FUNCTION docbase_reached_{T}(v {T}, path text[])
RETURNS TABLE(value {T}) LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT x.val FROM docbase_path_values_{T}(v, path) AS p
  CROSS JOIN LATERAL (
    SELECT p.value
    UNION ALL
    SELECT e.value
    FROM {T}_array_elements(CASE WHEN {T}_typeof(p.value) = 'array' THEN p.value END) AS e
  ) AS x(val)
$$;

CREATE OR REPLACE FUNCTION docbase_sort_items_{T}(v {T}, path text[])
RETURNS TABLE(value {T}) LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT x.val FROM docbase_path_values_{T}(v, path) AS p
  CROSS JOIN LATERAL (
    SELECT p.value WHERE {T}_typeof(p.value) <> 'array'
    UNION ALL
    SELECT e.value
    FROM {T}_array_elements(CASE WHEN {T}_typeof(p.value) = 'array' THEN p.value END) AS e
  ) AS x(val)
$$;
"""


SORT_ITEM_FUNCTION = r"""
CREATE OR REPLACE FUNCTION docbase_sort_item(v json, path text[], descending boolean)
RETURNS json LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT i.value FROM docbase_sort_items_json(v, path) AS i
  ORDER BY CASE WHEN descending THEN docbase_key(i.value) END COLLATE "C" DESC,
           docbase_key(i.value) COLLATE "C"
  LIMIT 1
$$;
"""


def install_statements() -> list[str]:
    """Return the ``CREATE OR REPLACE FUNCTION`` statements, in dependency order."""
    sources = [KEY_FUNCTIONS, *(_PATH_TEMPLATE.format(T=family) for family in ("jsonb", "json")),
               SORT_ITEM_FUNCTION]
    return [part.strip() + "$$" for source in sources
            for part in source.split("$$;") if part.strip()]
