-- BM25 reads each ranked row's term frequencies and length (store/pg_text.py). Taking them from
-- the tsvector means unnesting it row by row (~5-6 us a row at 1M, most of a query's time); this
-- column keeps them precomputed as JSONB, read by key in C (~1 us a row). It holds the row's
-- length (tsvector positions) under the key '' (no lexeme is empty) and the weighted frequency
-- of each lexeme whose frequency is not 1 (key positions weigh 2.0, content and time words 1.0,
-- search context 0.3: bm25.COLUMN_WEIGHTS). A lexeme the row holds once in its content or time
-- words, the common case, is left out: its frequency is 1, and whether the row holds it at all
-- is read from search_all. That keeps the column at ~40-70 bytes a row instead of ~300.
-- A generated column cannot read another one, so it repeats search_all's expression (0008).
-- Adding it rewrites the table and rebuilds its indexes: about a minute or two per million rows.
CREATE FUNCTION engram_term_counts(v TSVECTOR) RETURNS JSONB LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(jsonb_object_agg(u.lexeme, u.f) FILTER (WHERE u.f <> 1), '{}')
           || jsonb_build_object('', COALESCE(sum(u.n), 0))
    FROM (SELECT lexeme, cardinality(positions) AS n,
                 2.0 * cardinality(array_positions(weights, 'A')) + 1.0 * cardinality(array_positions(weights, 'B'))
                 + 0.3 * cardinality(array_positions(weights, 'C')) AS f
          FROM unnest(v)) u
$$;
ALTER TABLE memories ADD COLUMN search_counts JSONB GENERATED ALWAYS AS (engram_term_counts(
    setweight(to_tsvector('english', key), 'A') || setweight(to_tsvector('english', content), 'B')
    || setweight(to_tsvector('english', coalesce(search_context, '')), 'C')
    || setweight(to_tsvector('english',
        CASE extract(month FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int
            WHEN 1 THEN 'January' WHEN 2 THEN 'February' WHEN 3 THEN 'March' WHEN 4 THEN 'April'
            WHEN 5 THEN 'May' WHEN 6 THEN 'June' WHEN 7 THEN 'July' WHEN 8 THEN 'August'
            WHEN 9 THEN 'September' WHEN 10 THEN 'October' WHEN 11 THEN 'November' ELSE 'December' END
        || ' ' || extract(day FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int::text
        || ' ' || extract(year FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int::text), 'B')
)) STORED;
