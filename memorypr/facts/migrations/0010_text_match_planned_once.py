"""`fact_text_matches()` is planned once per connection, not at each call.

Since migration 0006 the match can only go through the scoped GIN index: its checks of the
namespace, subject and status are written so that no btree can serve them, and the index's
scope lexeme already narrows to the subject. A plan made for any call's values is the plan
made for all of them, so the statement inside keeps its generic plan. Planning it again at
each call (force_custom_plan, from the days before the scoped index) cost more than running
it: 0.3-0.5 ms of PostgreSQL time per phase, up to a third of a retrieval in a small subject.
"""

from django.db import migrations

SIGNATURE = "fact_text_matches(bigint, varchar, tsquery, timestamptz, boolean, varchar[], integer)"


class Migration(migrations.Migration):
    dependencies = [("facts", "0009_embedding_written_as_vector_literal")]
    operations = [
        migrations.RunSQL(
            f"ALTER FUNCTION {SIGNATURE} SET plan_cache_mode = force_generic_plan",
            f"ALTER FUNCTION {SIGNATURE} SET plan_cache_mode = force_custom_plan",
        )
    ]
