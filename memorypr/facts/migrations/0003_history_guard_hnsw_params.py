from django.conf import settings
from django.db import migrations

# History is never overwritten. A fact version's content never changes; its status moves
# once, from active to superseded / retracted / expired / stale, and retired_at records
# when (filled in here when a writer forgets it). Confidence, importance, access counts and
# the vector columns stay updatable (feedback, evolution, re-embedding); DELETE stays
# allowed for the retention purge.
GUARD = """
CREATE OR REPLACE FUNCTION fact_version_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.status <> 'active' AND NEW.retired_at IS NULL THEN
            NEW.retired_at := NEW.created_at;
        END IF;
        RETURN NEW;
    END IF;
    IF (NEW.id, NEW.namespace_id, NEW.subject, NEW.category, NEW.key, NEW.value, NEW.version,
        NEW.operation_id, NEW.pull_id, NEW.created_at, NEW.valid_from, NEW.valid_to)
       IS DISTINCT FROM
       (OLD.id, OLD.namespace_id, OLD.subject, OLD.category, OLD.key, OLD.value, OLD.version,
        OLD.operation_id, OLD.pull_id, OLD.created_at, OLD.valid_from, OLD.valid_to) THEN
        RAISE EXCEPTION 'fact versions are history: the content of version % cannot change', OLD.id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status <> 'active' AND (NEW.status IS DISTINCT FROM OLD.status
                                   OR NEW.retired_at IS DISTINCT FROM OLD.retired_at
                                   OR NEW.retired_by_pull_id IS DISTINCT FROM OLD.retired_by_pull_id) THEN
        RAISE EXCEPTION 'fact version % is retired (%): its status is final', OLD.id, OLD.status
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status = 'active' AND NEW.status <> 'active' AND NEW.retired_at IS NULL THEN
        NEW.retired_at := now();
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER fact_version_guard
    BEFORE INSERT OR UPDATE ON facts_factversion
    FOR EACH ROW EXECUTE FUNCTION fact_version_guard();
"""

UNGUARD = """
DROP TRIGGER IF EXISTS fact_version_guard ON facts_factversion;
DROP FUNCTION IF EXISTS fact_version_guard();
"""

DEFAULT_M, DEFAULT_EF_CONSTRUCTION = 16, 64


def hnsw_from_settings(apps, schema_editor):
    """Rebuild the HNSW index when the settings ask for other parameters than the declared ones."""
    m = int(getattr(settings, "MEMORYPR_HNSW_M", DEFAULT_M))
    ef_construction = int(getattr(settings, "MEMORYPR_HNSW_EF_CONSTRUCTION", DEFAULT_EF_CONSTRUCTION))
    if (m, ef_construction) == (DEFAULT_M, DEFAULT_EF_CONSTRUCTION):
        return
    schema_editor.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
    schema_editor.execute(
        "CREATE INDEX fact_embedding_hnsw ON facts_factversion USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )


class Migration(migrations.Migration):
    dependencies = [("facts", "0002_history_invariants")]
    operations = [
        migrations.RunSQL(GUARD, UNGUARD),
        migrations.RunPython(hnsw_from_settings, migrations.RunPython.noop),
    ]
