"""Each tenant table's policy reads the connection's scope once per statement, not once per row.

The policies of migration 0003 called `memorypr_scope_all()` (and, for the audit table,
`memorypr_scope_names()`) bare: STABLE functions, which PostgreSQL calls again for every row a
statement reads. As scalar subqueries they are InitPlans, run once (memorypr/common/db/rls.py).
Same rows visible and writable as before.
"""

from importlib import import_module

from django.db import migrations

tenant_tables = import_module("memorypr.common.migrations.0003_row_level_security").tenant_tables

PER_ROW = {"scope_all": "memorypr_scope_all()", "scope_names": "memorypr_scope_names()"}


class Migration(migrations.Migration):
    dependencies = [("common", "0003_row_level_security")]

    # Each policy replaced in place (DROP POLICY IF EXISTS, CREATE POLICY): forward the policies
    # that read the scope once, backward those of 0003 that read it per row.
    operations = [
        migrations.RunSQL(once, per_row)
        for (once, _), (per_row, _) in zip(tenant_tables(), tenant_tables(**PER_ROW), strict=True)
    ]
