"""What a HUD may do, by role (docs/ssh-reviewers.md, "Roles")."""

from typing import Literal

Role = Literal["reviewer", "approver", "operator"]
"""A reviewer browses (no writer), an approver decides requests and nothing else, an
operator does everything the HUD offers."""
ROLES: tuple[Role, ...] = ("reviewer", "approver", "operator")
Identity = tuple[str | None, str | None]
"""Who decides and from where, for the writer; None: the local user, the ssh client or tty."""
