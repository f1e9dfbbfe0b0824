"""What the generic template takes from a system's ``formulas`` module, for the Exalted
tracker: its House Rules rows.  The tracker has no live formulas: the odds (E1, E7,
X28-X33) depend on the whole battle, so the steps write the engine's own figures."""

from __future__ import annotations

from sheetsync.rules.exalted.sheet import house_rule_rows

__all__ = ["house_rule_rows"]
