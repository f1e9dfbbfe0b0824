"""What an after-action report says, whatever the rule system (issue 11, part 3): an
:class:`Account` of plain lines, each citing its rule, with chart series and pictures, and
the :class:`ReportSource` it was told from.  Each system's ``report`` room builds one; the
shared renderers (:mod:`sheetsync.app.report`) turn any account into Markdown or HTML.
Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Account", "Chart", "Group", "Line", "Picture", "ReportSource", "StepBlock"]


# --------------------------------------------------------------------------- the account


@dataclass(frozen=True)
class Line:
    """One line of the account.  ``rule_ref`` is the rule the line applies (``Tasks 5.2``);
    ``kind`` is ``event`` (one resolved order, move or attack), ``end`` (something the end
    of the step did) or ``note``; ``numbers`` holds the figures the text shows, by name."""

    text: str
    rule_ref: str = ""
    kind: str = "event"
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass
class Group:
    """A cohort or a unit: its name, side, who was in it (or what it is) and its standing."""

    name: str
    side: str
    members: list[str]
    details: str = ""


@dataclass
class StepBlock:
    """One resolved step (a phase or a turn) and its lines, in the order they happened."""

    title: str
    lines: list[Line]
    problem: str | None = None
    """Set when the step could not be replayed exactly from the record."""


@dataclass(frozen=True)
class Chart:
    """A chart: ``series`` maps a name to one value per x label; drawn as SVG in the HTML
    and as a table in the Markdown."""

    title: str
    x_labels: tuple[str, ...]
    series: dict[str, tuple[float, ...]]
    kind: str = "line"
    y_label: str = ""


@dataclass(frozen=True)
class Picture:
    """A picture, embedded as a ``data:`` URI: PNG bytes, or an SVG document where PNG can't
    be drawn (no Pillow, as under Pyodide)."""

    title: str
    png: bytes = b""
    svg: str = ""

    @property
    def uri(self) -> str:
        """The picture as a ``data:`` URI (the PNG when there is one)."""
        import base64

        if self.png:
            return "data:image/png;base64," + base64.b64encode(self.png).decode()
        return "data:image/svg+xml;base64," + base64.b64encode(self.svg.encode()).decode()


@dataclass
class Account:
    """The Reporter's account of one battle, whatever its rule system."""

    title: str
    system_title: str
    source: str
    group_word: str
    """What a group is called: ``Cohort`` or ``Unit``."""
    step_word: str
    """What a step is called: ``phase`` or ``turn``."""
    groups: list[Group]
    steps: list[StepBlock]
    heroes: list[Line] | None
    """Hero Moments; ``None`` for a system that has none."""
    casualties: list[Line]
    aftermath: list[Line]
    charts: list[Chart] = field(default_factory=list)
    pictures: list[Picture] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the source holds and lacks, said plainly (shown near the top)."""

    @property
    def sides(self) -> list[str]:
        return list(dict.fromkeys(g.side for g in self.groups))

    def event_lines(self) -> list[Line]:
        """Every line that records one resolved order, move or attack."""
        return [ln for s in self.steps for ln in s.lines if ln.kind == "event"]




@dataclass
class ReportSource:
    """A battle to report on: its rule system, the battle with its history, where it came
    from, and, for a tracker, its backend (for what only the tracker knows, such as the
    aftermath End Battle would write)."""

    system: Any
    battle: Any
    name: str
    kind: str
    """``file``, ``workbook`` or ``gsheet``."""
    backend: Any = None
    ended: bool = False
