from __future__ import annotations

import pytest

from memorypr.common.db.roles import database_url_as_role


@pytest.mark.parametrize(
    ("owner_url", "app_url"),
    [
        # the embedded server: a Unix socket, trusted
        ("postgresql://postgres:@/postgres?host=/srv/pg", "postgresql://memorypr_app@/postgres?host=/srv/pg"),
        # the owner's password never travels with the other role
        ("postgresql://owner:secret@db.internal:5432/mp", "postgresql://memorypr_app@db.internal:5432/mp"),
        ("postgres://localhost/mp", "postgres://memorypr_app@localhost/mp"),
    ],
)
def test_the_web_roles_url_is_the_owners_server_without_the_owners_credentials(owner_url, app_url):
    assert database_url_as_role(owner_url, role="memorypr_app") == app_url
