"""DERIVED_FROM edges indexed by their source, apart from the UPDATES edges.

Retrieval drops every candidate that rests (DERIVED_FROM) on a fact that is no longer alive,
in its one statement (memorypr.retrieval.candidates). The edge table's indexes lead with the
source and target of every edge, and every update leaves an UPDATES edge: with 7k of them and
no DERIVED_FROM edge, the generic plan read the whole edge table for that check, 0.46 ms of a
1.3 ms statement in a subject of 100 facts; with 245k edges it probed the unique index once per
candidate (50 probes, 150 buffers). This index holds the DERIVED_FROM edges alone: the check
reads one page (0.004 ms), whatever the number of updates. Built CONCURRENTLY: merges go on
writing edges meanwhile.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("facts", "0018_fact_text_common_words"), ("pulls", "0007_kpr_agent_ns_created")]
    operations = [
        AddIndexConcurrently(
            model_name="factedge",
            index=models.Index(
                condition=models.Q(edge_type="DERIVED_FROM"), fields=["source"], name="fact_edge_derived_source"
            ),
        ),
    ]
