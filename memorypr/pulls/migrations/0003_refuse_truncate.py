from django.db import migrations

SQL = """
CREATE TRIGGER kpr_no_truncate
    BEFORE TRUNCATE ON pulls_knowledgepullrequest
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
CREATE TRIGGER operation_no_truncate
    BEFORE TRUNCATE ON pulls_operation
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
CREATE TRIGGER review_event_no_truncate
    BEFORE TRUNCATE ON pulls_reviewevent
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
"""

REVERSE = """
DROP TRIGGER IF EXISTS review_event_no_truncate ON pulls_reviewevent;
DROP TRIGGER IF EXISTS operation_no_truncate ON pulls_operation;
DROP TRIGGER IF EXISTS kpr_no_truncate ON pulls_knowledgepullrequest;
"""


class Migration(migrations.Migration):
    dependencies = [("pulls", "0002_immutability"), ("audit", "0003_refuse_truncate")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
