"""Shared helpers for the battalion-rules tests."""

from __future__ import annotations

from typing import Any

import pytest


def cohort_dict(name: str, size: int = 3, *, side: str = "players", **extra: Any) -> dict[str, Any]:
    """A battle-file cohort of ``size`` plain members named ``<name>1``.. (the first is Sergeant)."""
    members = [f"{name}{i}" for i in range(1, size + 1)]
    return {"name": name, "side": side, "sergeant": members[0], "members": members, **extra}


@pytest.fixture
def make_cohort():
    """Factory fixture for :func:`cohort_dict`."""
    return cohort_dict
