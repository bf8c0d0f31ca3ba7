from django.db import migrations

# TRUNCATE bypasses row triggers; refuse it too. Only a session that says so explicitly
# (the test suite's connections, to reset tables between tests) may truncate.
SQL = """
CREATE OR REPLACE FUNCTION refuse_truncate() RETURNS trigger AS $$
BEGIN
    IF coalesce(current_setting('memorypr.allow_truncate', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is append-only: TRUNCATE refused', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_no_truncate
    BEFORE TRUNCATE ON audit_auditevent
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
"""

REVERSE = """
DROP TRIGGER IF EXISTS audit_no_truncate ON audit_auditevent;
DROP FUNCTION IF EXISTS refuse_truncate();
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0002_append_only")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
