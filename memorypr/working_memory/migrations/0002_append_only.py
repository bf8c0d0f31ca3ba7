from django.db import migrations

# Transcripts are evidence: a quote checked against them must not become true later.
# UPDATE is refused; DELETE only inside the retention purge, which sets
# memorypr.transcript_purge for its own transaction.
SQL = """
CREATE OR REPLACE FUNCTION session_turn_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('memorypr.transcript_purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'session transcripts are append-only: % refused on turn %', TG_OP, OLD.id
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER session_turn_append_only
    BEFORE UPDATE OR DELETE ON working_memory_sessionturn
    FOR EACH ROW EXECUTE FUNCTION session_turn_guard();
"""

REVERSE = """
DROP TRIGGER IF EXISTS session_turn_append_only ON working_memory_sessionturn;
DROP FUNCTION IF EXISTS session_turn_guard();
"""


class Migration(migrations.Migration):
    dependencies = [("working_memory", "0001_initial")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
