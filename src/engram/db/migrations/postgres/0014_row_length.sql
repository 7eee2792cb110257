-- BM25 weighs a row's length against the mean (store/pg_text.py), and both must be counted as
-- SQLite's FTS5 counts them: every word of the key, the content, the search context and the time
-- words. The length step 0010 keeps (search_counts -> '', the tsvector's positions) leaves out
-- the words of PostgreSQL's english stopword list ("the", "is", "what", "they"), which
-- FTS5 counts: rows and the mean came out shorter by different shares, and the same memory scored
-- up to a few percent higher or lower than on SQLite (0.8765 there, 0.8882 here for `3.11`). search_length
-- holds the FTS5 count: the words PostgreSQL's parser reads (the ones it indexes, and its
-- stopwords) in each text as engram_words splits and folds it, plus the time words' three
-- (month, day, year). ts_parse, not a 'simple' tsvector: a tsvector keeps at most 255 positions a
-- word, and FTS5 counts them all.
CREATE FUNCTION engram_word_count(t TEXT) RETURNS INTEGER LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT count(*)::int FROM ts_parse('default', engram_words(t)) WHERE tokid <> 12  -- 12: blank
$$;
CREATE FUNCTION engram_row_length(key TEXT, content TEXT, search_context TEXT) RETURNS INTEGER
LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT engram_word_count(key) + engram_word_count(content) + engram_word_count(coalesce(search_context, '')) + 3
$$;
-- A plain column kept by a trigger rather than a generated one: adding a generated column
-- rewrites the whole table, while this one is filled in below only where its value differs from
-- the length the row already has. NULL means "search_counts' length is FTS5's" (rows without a
-- stopword, as they were before this step); every row written from now on has it.
ALTER TABLE memories ADD COLUMN search_length INTEGER;
CREATE FUNCTION engram_keep_search_length() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_length := engram_row_length(NEW.key, NEW.content, NEW.search_context);
    RETURN NEW;
END
$$;
-- Only the columns the length reads: recall's counters and superseding do not re-count.
CREATE TRIGGER memories_search_length BEFORE INSERT OR UPDATE OF key, content, search_context ON memories
    FOR EACH ROW EXECUTE FUNCTION engram_keep_search_length();
-- Not through the trigger: this UPDATE sets no column that it or the generated columns read, so
-- the full-text columns are not derived again, and only the rows whose length changes are written.
UPDATE memories SET search_length = engram_row_length(key, content, search_context)
WHERE engram_row_length(key, content, search_context) <> (search_counts ->> '')::int;
