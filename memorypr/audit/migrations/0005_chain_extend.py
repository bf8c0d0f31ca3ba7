"""The whole append in one round trip: lock, head, hashes, rows.

Every audited write of every namespace waits for the chain lock, and holds it until its
transaction commits. The append took two round trips inside that window (the lock and
head, then the rows), and between them the web thread had to win its process's GIL back to
hash the events. This function does all of it on the server: the caller sends each event's
canonical JSON in three pieces, around the two values only the lock holder knows (the
sequence and the time), and the function joins them and hashes exactly what
`memorypr.audit.services.audit_hash` hashes, so `verify_audit` checks these rows as before.

`audit_time_text()` writes a time as Python's `datetime.isoformat()` does for UTC: the
fraction only when the microseconds are not zero.

The lock was also held through the commit's WAL flush, so audited commits reached the disk
one at a time. With `p_commit_unflushed` the transaction commits without waiting for the
flush (the lock goes at once), and the caller waits for it after the commit, before it
answers anyone (`audit_commit_flushed`): concurrent waits share one flush. WAL is written in
order, so a crash can only lose a tail of commits, and the chain stays whole.
"""

from django.db import migrations

SQL = """
CREATE OR REPLACE FUNCTION audit_time_text(p_at timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog
    AS $$
        SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
            || CASE WHEN to_char(p_at AT TIME ZONE 'UTC', 'US') = '000000' THEN ''
                    ELSE '.' || to_char(p_at AT TIME ZONE 'UTC', 'US') END
            || '+00:00'
    $$;

CREATE OR REPLACE FUNCTION audit_chain_extend(
    p_lock bigint, p_namespace varchar[], p_actor varchar[], p_event_type varchar[], p_pull_id uuid[],
    p_subject varchar[], p_payload jsonb[], p_before_time text[], p_before_sequence text[],
    p_after_sequence text[], p_commit_unflushed boolean
) RETURNS TABLE (event_id bigint, event_sequence bigint, event_created_at timestamptz,
                 event_prev_hash varchar, event_hash varchar)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
    AS $$
DECLARE
    v_sequence bigint;
    v_prev varchar;
    v_now timestamptz;
    v_time text;
BEGIN
    IF p_commit_unflushed THEN
        -- the commit releases the lock without waiting for the disk; the caller waits after
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    PERFORM pg_advisory_xact_lock(p_lock);
    -- read after the lock was granted: the head as the last holder committed it
    SELECT e.sequence, e.hash INTO v_sequence, v_prev FROM audit_auditevent e ORDER BY e.sequence DESC LIMIT 1;
    IF NOT FOUND THEN
        v_sequence := 0;
        v_prev := repeat('0', 64);
    END IF;
    -- under the lock, so the chain's times never go backwards
    v_now := clock_timestamp();
    v_time := audit_time_text(v_now);
    FOR i IN 1 .. coalesce(array_length(p_namespace, 1), 0) LOOP
        v_sequence := v_sequence + 1;
        event_prev_hash := v_prev;
        event_hash := encode(sha256(convert_to(
            v_prev || p_before_time[i] || v_time || p_before_sequence[i] || v_sequence::text
                || p_after_sequence[i], 'UTF8')), 'hex');
        INSERT INTO audit_auditevent
            (sequence, created_at, namespace, actor, event_type, pull_id, subject, payload, prev_hash, hash)
        VALUES (v_sequence, v_now, p_namespace[i], p_actor[i], p_event_type[i], p_pull_id[i], p_subject[i],
                p_payload[i], v_prev, event_hash)
        RETURNING id INTO event_id;
        event_sequence := v_sequence;
        event_created_at := v_now;
        RETURN NEXT;
        v_prev := event_hash;
    END LOOP;
END;
$$;
"""

REVERSE = """
DROP FUNCTION IF EXISTS audit_chain_extend(bigint, varchar[], varchar[], varchar[], uuid[], varchar[], jsonb[],
                                           text[], text[], text[], boolean);
DROP FUNCTION IF EXISTS audit_time_text(timestamptz);
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0004_chain_lock_tip")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
