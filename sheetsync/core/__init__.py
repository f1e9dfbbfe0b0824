"""The seam every rule system plugs into: the :class:`~sheetsync.core.system.RuleSystem`
protocol and its steps, the registry of systems (imported lazily, so a button click loads
only the system it needs), the tracker's system mark (``bbn@1``), and the layout types
(columns with codecs) that the generic sheet reader, writer and template draw from.

Pure: the standard library only."""

from __future__ import annotations

__all__: list[str] = []
