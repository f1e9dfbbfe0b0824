"""The few-entries memory the step caches share (issue 12)."""

from __future__ import annotations

from sheetsync.core.recent import keep


def test_issue12_keep_puts_an_entry_newest_and_drops_the_oldest_past_the_limit() -> None:
    seen: dict[str, int] = {}
    for i, key in enumerate("abc"):
        keep(seen, key, i, 3)
    keep(seen, "a", 10, 3)  # put again: newest, with its new value, nothing dropped
    assert list(seen.items()) == [("b", 1), ("c", 2), ("a", 10)]
    keep(seen, "d", 3, 3)
    assert list(seen) == ["c", "a", "d"]  # the oldest, b, went
    keep(seen, "e", 4, 1)
    assert seen == {"e": 4}
