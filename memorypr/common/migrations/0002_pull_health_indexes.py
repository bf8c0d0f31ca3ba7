from django.db import migrations

# /healthz and the merge sweep ask for the oldest KPR still waiting for review, and the oldest
# approved KPR still waiting for its merge. Partial indexes hold only the waiting rows, so both
# answers are one index probe however large the history grows.
SQL = """
CREATE INDEX IF NOT EXISTS kpr_pending_created
    ON pulls_knowledgepullrequest (created_at)
    WHERE review_status = 'PENDING';
CREATE INDEX IF NOT EXISTS kpr_approved_unmerged_reviewed
    ON pulls_knowledgepullrequest (reviewed_at)
    WHERE review_status = 'APPROVED' AND merge_status = 'UNMERGED';
"""

REVERSE = """
DROP INDEX IF EXISTS kpr_approved_unmerged_reviewed;
DROP INDEX IF EXISTS kpr_pending_created;
"""


class Migration(migrations.Migration):
    dependencies = [("common", "0001_heartbeat"), ("pulls", "0003_refuse_truncate")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
