from django.db import migrations

SQL = """
CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit log is append-only: % refused on event %', TG_OP, OLD.sequence
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_append_only
    BEFORE UPDATE OR DELETE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
"""

REVERSE = """
DROP TRIGGER IF EXISTS audit_append_only ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_refuse_change();
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
