"""`fact_text_common_words()`: the words of a subject that its active facts hold too often to search for.

A full-text phase over a whole subject reads the index's posting list of each of its words
before it ranks at most MEMORYPR_FTS_MAX_MATCHES matches: for a word that 5,000 facts of a
subject hold, 1.2 ms to list them, then an arbitrary 200 of them (the first found, not the
best) ranked. Retrieval asks this function which of a subject's words are that common, and
searches a phase made only of them among the vector channel's rows instead
(memorypr.retrieval.common_words).

It reads what ANALYZE keeps of the scoped text index (migration 0015): the most common of its
lexemes (`<scope>§word` for an active version) with the share of the table's rows that hold
each. A lexeme is common when that share times the table's row count reaches `p_min_rows`. Lexemes
too rare to be kept are not common; before the first ANALYZE no word is. Like
`fact_text_matches()`, it runs as the tables' owner (the statistics of an index are shown to
its owner) and answers only for a namespace in the caller's scope.
"""

from django.db import migrations

_SCOPE = "left(md5(p_namespace_id::text || '§' || p_subject), 8) || '§'"

FORWARD = f"""
CREATE OR REPLACE FUNCTION fact_text_common_words(
    p_namespace_id bigint, p_subject varchar, p_min_rows real
) RETURNS SETOF text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, public
    AS $$
        SELECT substr(e.lexeme, length({_SCOPE}) + 1)
        FROM pg_stats s,
             unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, share)
        WHERE (memorypr_caller_is_owner() OR memorypr_scope_all()
               OR p_namespace_id = ANY (ARRAY(SELECT n.id FROM agents_namespace n
                                             WHERE n.name = ANY (memorypr_scope_names()))))
          AND s.schemaname = 'public' AND s.tablename = 'fact_scoped_search_gin'
          AND starts_with(e.lexeme, {_SCOPE})
          -- a retired version's lexeme is `<scope>§r§word`; no word holds '§'
          AND NOT starts_with(e.lexeme, {_SCOPE} || 'r§')
          AND e.lexeme IS NOT NULL
          AND e.share * (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'facts_factversion'::regclass)
              >= p_min_rows
    $$;
"""

REVERSE = "DROP FUNCTION IF EXISTS fact_text_common_words(bigint, varchar, real);"


class Migration(migrations.Migration):
    dependencies = [("facts", "0017_indexes_covered_by_composites")]
    operations = [migrations.RunSQL(FORWARD, REVERSE)]
