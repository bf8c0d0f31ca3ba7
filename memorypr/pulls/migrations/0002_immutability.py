from django.db import migrations

# A KPR's content and its operations never change; only the status columns move.
SQL = """
CREATE OR REPLACE FUNCTION kpr_refuse_content_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'knowledge pull requests are immutable: DELETE refused on %', OLD.id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF (NEW.id, NEW.created_at, NEW.namespace_id, NEW.subject, NEW.agent_id, NEW.proposed_by,
        NEW.source_session_id, NEW.idempotency_key, NEW.request_hash, NEW.reverts_id)
       IS DISTINCT FROM
       (OLD.id, OLD.created_at, OLD.namespace_id, OLD.subject, OLD.agent_id, OLD.proposed_by,
        OLD.source_session_id, OLD.idempotency_key, OLD.request_hash, OLD.reverts_id) THEN
        RAISE EXCEPTION 'knowledge pull requests are immutable: content of % cannot change', OLD.id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER kpr_immutable
    BEFORE UPDATE OR DELETE ON pulls_knowledgepullrequest
    FOR EACH ROW EXECUTE FUNCTION kpr_refuse_content_change();

CREATE OR REPLACE FUNCTION append_only_refuse() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER operation_immutable
    BEFORE UPDATE OR DELETE ON pulls_operation
    FOR EACH ROW EXECUTE FUNCTION append_only_refuse();

CREATE TRIGGER review_event_append_only
    BEFORE UPDATE OR DELETE ON pulls_reviewevent
    FOR EACH ROW EXECUTE FUNCTION append_only_refuse();
"""

REVERSE = """
DROP TRIGGER IF EXISTS review_event_append_only ON pulls_reviewevent;
DROP TRIGGER IF EXISTS operation_immutable ON pulls_operation;
DROP TRIGGER IF EXISTS kpr_immutable ON pulls_knowledgepullrequest;
DROP FUNCTION IF EXISTS append_only_refuse();
DROP FUNCTION IF EXISTS kpr_refuse_content_change();
"""


class Migration(migrations.Migration):
    dependencies = [("pulls", "0001_initial")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
