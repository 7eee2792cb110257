-- Full text splits words where SQLite's FTS5 (unicode61) does: at every punctuation mark.
-- PostgreSQL's parser keeps "3.12", "example.com", "/usr/bin", "bob@example.com" and "-12" as
-- one lexeme each (and "e-mail" as a whole beside its parts), while queries are built from word
-- tokens ("3.12" is the words 3 and 12: engram.text), so `recall "python 3.12"` and `forget
-- --query "python 3.12"` never matched the memory saying it. ASCII punctuation is read as a
-- space before parsing (engram_words), as FTS5 reads it; the row lengths BM25 reads follow.
-- The three generated columns are replaced in one ALTER TABLE: one rewrite of the table, then
-- its two GIN indexes rebuilt (about as long as step 0010: a minute or two per million rows).
CREATE FUNCTION engram_words(t TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(t, E'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', repeat(' ', 32))
$$;
-- What search_all indexes (the key, the content, the search context and the date it was stored,
-- in words), once for the two columns built from it.
CREATE FUNCTION engram_search_all(key TEXT, content TEXT, search_context TEXT, created_at DOUBLE PRECISION)
RETURNS TSVECTOR LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('english', engram_words(key)), 'A')
        || setweight(to_tsvector('english', engram_words(content)), 'B')
        || setweight(to_tsvector('english', engram_words(coalesce(search_context, ''))), 'C')
        || setweight(to_tsvector('english',
            CASE extract(month FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int
                WHEN 1 THEN 'January' WHEN 2 THEN 'February' WHEN 3 THEN 'March' WHEN 4 THEN 'April'
                WHEN 5 THEN 'May' WHEN 6 THEN 'June' WHEN 7 THEN 'July' WHEN 8 THEN 'August'
                WHEN 9 THEN 'September' WHEN 10 THEN 'October' WHEN 11 THEN 'November' ELSE 'December' END
            || ' ' || extract(day FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int::text
            || ' ' || extract(year FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int::text), 'B')
$$;
DROP INDEX IF EXISTS memories_search;
DROP INDEX IF EXISTS memories_search_all;
ALTER TABLE memories
    DROP COLUMN IF EXISTS search,
    DROP COLUMN IF EXISTS search_all,
    DROP COLUMN IF EXISTS search_counts,
    ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', engram_words(key)), 'A')
        || setweight(to_tsvector('english', engram_words(content)), 'B')
    ) STORED,
    ADD COLUMN search_all TSVECTOR GENERATED ALWAYS AS (
        engram_search_all(key, content, search_context, created_at)
    ) STORED,
    -- A generated column cannot read another one: search_all's function again (step 0010).
    ADD COLUMN search_counts JSONB GENERATED ALWAYS AS (
        engram_term_counts(engram_search_all(key, content, search_context, created_at))
    ) STORED;
CREATE INDEX memories_search ON memories USING GIN (search);
CREATE INDEX memories_search_all ON memories USING GIN (search_all);
-- The new column has no statistics yet: store/pg_text.py reads its most common lexemes.
ANALYZE memories;
