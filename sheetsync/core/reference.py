"""The shape of a rule system's reference: its rule sections, its rulings (how sheetsync
reads each open or contradictory place) and the house-rule keys that change a reading.

Each system's ``rules/<system>/reference.py`` fills one :class:`Reference` with data in
sheetsync's own words; ``docs/rules/<system>.md`` (the parts between its ``<!-- ... -->``
markers) and ``sheetsync rules --system <system>`` are both made from it.  Standard library
only, so the rules core can carry its reference without pulling in anything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["HouseRule", "Reference", "Ruling", "Section"]


@dataclass(frozen=True, slots=True)
class Section:
    """A section of the rules text, as code and results cite it ("6.2.1", "Unit Damage")."""

    ref: str
    title: str
    about: str


@dataclass(frozen=True, slots=True)
class Ruling:
    """How sheetsync reads one open or contradictory place: ``ref`` is its key ("H7",
    "X35"), ``keys`` the house rules that change the reading."""

    ref: str
    title: str
    sections: tuple[str, ...]
    text: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HouseRule:
    """A house-rule key as the House Rules sheet and a battle file's ``house_rules:`` take it:
    its default and allowed values as they are typed, the ruling it belongs to, and what it
    changes."""

    key: str
    default: str
    allowed: str
    ruling: str
    what: str


@dataclass(frozen=True)
class Reference:
    """One rule system's reference."""

    system: str
    title: str
    rulings: tuple[Ruling, ...]
    sections: tuple[Section, ...]
    house_rules: tuple[HouseRule, ...] = ()
    cite_example: str = ""
    _by_ref: dict[str, Ruling] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_ref", {r.ref.upper(): r for r in self.rulings})

    @property
    def doc(self) -> str:
        """Where the reference is written down in the repository."""
        return f"docs/rules/{self.system}.md"

    def find(self, ref: str) -> Ruling | None:
        """The ruling ``ref`` names, in any case and spacing ("H7", " x35 "), or ``None``.
        A bare number ("16") names a ruling when every key has the same letter."""
        m = re.fullmatch(r"([A-Z]*)0*(\d+)", re.sub(r"\s+", "", ref).upper())
        if m is None:
            return None
        letter, number = m.groups()
        letters = {r.ref.rstrip("0123456789") for r in self.rulings}
        if not letter and len(letters) == 1:
            letter = letters.pop()
        return self._by_ref.get(letter + number)

    def keys_listed(self) -> str:
        """The ruling keys, runs of one letter shown as a range: ``E1 to E11, X1 to X52``."""
        runs: list[list[str]] = []
        for r in self.rulings:
            letter = r.ref.rstrip("0123456789")
            if runs and runs[-1][0].rstrip("0123456789") == letter:
                runs[-1].append(r.ref)
            else:
                runs.append([r.ref])
        return ", ".join(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs)

    def rulings_for(self, section: str) -> list[Ruling]:
        """The rulings that read ``section``: ``6.2`` takes in those citing ``6.2.1`` (and
        ``6.3`` does not take in ``6.3x``)."""
        return [r for r in self.rulings
                if any(c == section or c.startswith(section + ".") for c in r.sections)]

    def default_of(self, key: str) -> str:
        return next(h.default for h in self.house_rules if h.key == key)

    # -- the generated parts of docs/rules/<system>.md

    def house_rules_markdown(self) -> str:
        out = ["| Key | Default | Allowed | Ruling | What it changes |", "| --- | --- | --- | --- | --- |"]
        out += [f"| `{h.key}` | `{h.default}` | {h.allowed} | {h.ruling} | {h.what} |" for h in self.house_rules]
        return "\n".join(out)

    def rulings_markdown(self) -> str:
        out: list[str] = []
        for r in self.rulings:
            head = f"- **{r.ref} {r.title}** ({', '.join(r.sections)})"
            if r.keys:
                shown = ", ".join(f"`{k}` (default `{self.default_of(k)}`)" for k in r.keys)
                head += f". House rule{'s' if len(r.keys) > 1 else ''} {shown}"
            out.append(f"{head}. {r.text}")
        return "\n".join(out)

    def sections_markdown(self) -> str:
        out = ["| Section | Title | What it covers | Rulings |", "| --- | --- | --- | --- |"]
        for s in self.sections:
            refs = ", ".join(r.ref for r in self.rulings_for(s.ref))
            out.append(f"| {s.ref} | {s.title} | {s.about} | {refs} |")
        return "\n".join(out)

    def render_document(self, doc: str) -> str:
        """``doc`` with each ``<!-- NAME:begin -->`` ... ``<!-- NAME:end -->`` part
        regenerated (``house-rules``, ``rulings``, ``sections``)."""
        parts: dict[str, Callable[[], str]] = {"house-rules": self.house_rules_markdown,
                                               "rulings": self.rulings_markdown,
                                               "sections": self.sections_markdown}
        for name, make in parts.items():
            begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->"
            start = doc.find(begin)
            stop = doc.find(end, start)
            if start < 0 or stop < 0:
                raise ValueError(f"the document has no {begin.strip()} ... {end} part")
            doc = doc[:start + len(begin)] + make() + "\n" + doc[stop:]
        return doc
