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


@pytest.fixture(autouse=True)
def _remembered_states_read_back_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12, across the whole suite: every State blob a step remembers (the battle it
    reads back as, and the rest of its JSON) equals what parsing and checking that very text
    gives, so a step that skips the parse on a remembered State behaves as a fresh process."""
    import json

    from sheetsync.systems.bbn.tracker import journal as sj

    real = sj._remember

    def checked(text: str, battle: Any, rest: dict[str, Any]) -> None:
        payload = json.loads(text)
        assert rest == {k: v for k, v in payload.items() if k != "battle"}
        parsed = sj._battle(payload["battle"], "the battle")
        sj._history(parsed)  # its undo snapshot checks too, as parse_state checks it
        assert battle == parsed
        real(text, battle, rest)

    monkeypatch.setattr(sj, "_remember", checked)
