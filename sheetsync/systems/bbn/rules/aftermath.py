"""Battle Aftermath (R26-R30, R35): from the cohort sheet back to each character's sheet."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from sheetsync.core.dice import Roller
from sheetsync.core.model import model
from sheetsync.systems.bbn.rules.battle import Battle
from sheetsync.systems.bbn.rules.models import Frozen, State

__all__ = ["AftermathEntry", "LastingEffect", "aftermath", "aftermath_json", "aegis_halve", "lasting_result", "split_damage"]

# R28: the lasting-effect tables, by the band of damage reached (in our words).
LASTING_TABLES: dict[int, list[tuple[range, str]]] = {
    25: [(range(1, 10), "up to 2 points of Flaws"), (range(10, 11), "no drawback")],
    50: [(range(1, 6), "up to 4 points of Flaws"), (range(6, 10), "a Derangement and up to 2 points of Flaws"),
         (range(10, 11), "no drawback")],
    75: [(range(1, 2), "loses a Conscience/Conviction point and a point of Path/Humanity"),
         (range(2, 4), "loses a point of Path/Humanity"), (range(4, 7), "up to 6 points of Flaws"),
         (range(7, 10), "a Derangement and up to 4 points of Flaws"), (range(10, 11), "no drawback")],
}


@model
class LastingEffect(Frozen):
    """R28: the one d10 roll on the table of the highest band reached."""

    band: int
    roll: int
    source: Literal["entered", "rolled"]
    result: str


@model
class AftermathEntry(Frozen):
    """One character's aftermath report line (R26-R30)."""

    cohort: str
    name: str
    dead: bool
    damage: int
    aggravated: int
    lethal: int
    aegis: int
    torpor: bool
    lasting_effect: LastingEffect | None
    temper_returned: int


def split_damage(damage_taken: int, survivors: int) -> int:
    """R26: the cohort's damage shared equally, rounded up, among members not Dead."""
    if survivors <= 0:
        return 0
    return math.ceil(max(0, damage_taken) / survivors)


def aegis_halve(aggravated: int, lethal: int, burns: int) -> tuple[int, int]:
    """R27: each Aegis burn halves the Aggravated and Lethal levels, rounded up, so damage
    above 0 never reaches 0."""
    for _ in range(burns):
        aggravated, lethal = math.ceil(aggravated / 2), math.ceil(lethal / 2)
    return aggravated, lethal


def lasting_result(band: int, roll: int) -> str:
    """R28: the result of ``roll`` on the table of ``band`` (25, 50 or 75)."""
    for span, text in LASTING_TABLES[band]:
        if roll in span:
            return text
    raise ValueError(f"roll {roll} is not a d10 result")


def aftermath(
    battle: Battle,
    roller: Roller,
    aegis: Mapping[str, Mapping[str, int]] | None = None,
    lasting_rolls: Mapping[str, Mapping[str, int]] | None = None,
) -> list[AftermathEntry]:
    """Battle Aftermath, R26-R30, R35: per character damage (3 to 1 Aggravated, rest
    Lethal), Aegis burns, Torpor, lasting effects, and the Temper returned.

    R35 (``torpor_after_aegis = true``, the default): Torpor is judged on the levels left
    after the Aegis burns; with ``false``, on the levels before any burn.

    ``aegis`` is ``{cohort: {member: burns}}`` (at most 3 each) and ``lasting_rolls``
    ``{cohort: {member: d10}}`` typed in (R25); both default to what each cohort declares.
    """
    aegis = aegis if aegis is not None else {c.name: c.aegis for c in battle.cohorts}
    lasting_rolls = lasting_rolls if lasting_rolls is not None else {c.name: c.lasting_rolls for c in battle.cohorts}
    out: list[AftermathEntry] = []
    for spec in battle.cohorts:
        st = battle.state[spec.name]
        max_health = battle.pools[spec.name].pools["health"]
        alive = [m for m in spec.members if st.states[m.name] is not State.DEAD]
        each = split_damage(max_health - st.health, len(alive))
        temper_each = max(0, st.temper) // len(alive) if alive else 0
        for m in spec.members:
            dead = st.states[m.name] is State.DEAD
            if dead:
                out.append(AftermathEntry(cohort=spec.name, name=m.name, dead=True, damage=0, aggravated=0, lethal=0,
                                          aegis=0, torpor=False, lasting_effect=None, temper_returned=0))
                continue
            burns = min(3, max(0, int(aegis.get(spec.name, {}).get(m.name, 0))))
            agg, lethal = aegis_halve(each // 3, each % 3, burns)
            levels = m.health_levels or battle.house_rules.health_levels
            judged = agg + lethal if battle.house_rules.torpor_after_aegis else each // 3 + each % 3
            effect = None
            band = 75 if each >= 75 else 50 if each >= 50 else 25 if each >= 25 else 0
            if band:
                typed = lasting_rolls.get(spec.name, {}).get(m.name)
                value = typed if typed is not None else roller.roll(10)
                effect = LastingEffect(band=band, roll=value, source="entered" if typed is not None else "rolled",
                                       result=lasting_result(band, value))
            out.append(AftermathEntry(
                cohort=spec.name, name=m.name, dead=False, damage=each, aggravated=agg, lethal=lethal,
                aegis=burns, torpor=judged > levels, lasting_effect=effect, temper_returned=temper_each,
            ))
    return out


def aftermath_json(entries: list[AftermathEntry]) -> dict[str, Any]:
    """``{"characters": [...]}`` as ``sheetsync aftermath --json`` prints it."""
    return {"characters": [e.model_dump(mode="json") for e in entries]}


