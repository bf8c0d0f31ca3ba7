"""The chain lock and the chain's head in one round trip.

An append holds the chain lock from the moment it is granted until its transaction commits,
and every audited write of every namespace waits for it. The answer to the lock request, and
then the question for the head, were two round trips inside that window; one function does
both. It runs as the owner (the head may be another tenant's event) and, being VOLATILE
plpgsql, reads the head with a snapshot taken after the lock was granted: the head of the
chain as the last holder committed it.
"""

from django.db import migrations

SQL = """
CREATE OR REPLACE FUNCTION audit_chain_lock_tip(p_lock bigint) RETURNS TABLE (sequence bigint, hash varchar)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    RETURN QUERY SELECT e.sequence, e.hash FROM audit_auditevent e ORDER BY e.sequence DESC LIMIT 1;
END;
$$;
"""

REVERSE = "DROP FUNCTION IF EXISTS audit_chain_lock_tip(bigint);"


class Migration(migrations.Migration):
    dependencies = [("audit", "0003_refuse_truncate"), ("common", "0003_row_level_security")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
