"""The Exalted 2e mass combat reference: the sections of the mass combat text and how
sheetsync reads it: E1-E11 for the core rules the text leans on, X1-X52 for the mass combat
rules themselves, with the house-rule keys that change a reading.

This is the one source of ``docs/rules/exalted.md`` (the parts between its ``<!-- ... -->``
markers) and of ``sheetsync rules --system exalted``; a test checks the house-rule keys and
defaults against :class:`~sheetsync.systems.exalted.rules.models.HouseRules`.  Regenerate the
document with ``python -m sheetsync.systems.exalted.reference docs/rules/exalted.md``.

Everything here is in sheetsync's own words; the rules text stays outside the project.
Standard library only.
"""

from __future__ import annotations

import sys

from sheetsync.core.reference import HouseRule, Reference, Ruling, Section

__all__ = ["HOUSE_RULES", "REFERENCE", "RULINGS", "SECTIONS"]

CORE = "Core rules"

SECTIONS: tuple[Section, ...] = (
    Section(CORE, "The core rules", "Dice, difficulty, penalties, ticks, attacks, DV, soak, health and actions: "
                                    "the Exalted 2e core book, which the mass combat text builds on."),
    Section("Units", "Units", "Troops as a bonus to their commander; solo and complementary units."),
    Section("Magnitude", "Magnitude", "A unit's size, from its headcount by a doubling table."),
    Section("Drill", "Drill", "A unit's training, 0 to 5."),
    Section("Endurance", "Endurance", "The members' physical reserves, worn down by fighting."),
    Section("Might", "Might", "Supernatural power and magical equipment."),
    Section("Attack Rating", "Close Combat/Ranged Attack Rating", "The members' skill at attacking."),
    Section("Attack Damage", "Close Combat/Ranged Attack Damage", "How hard the members hit."),
    Section("Armor", "Armor", "The members' average protection."),
    Section("Shields", "Shields", "When the members' shields count."),
    Section("Morale", "Morale", "The unit's courage, set by its members and commander."),
    Section("Special Characters", "Special Characters", "Heroes, sorcerers and relays inside a unit."),
    Section("Formation", "Formation", "Unordered, Skirmish, Relaxed and Close, and the Drill each needs."),
    Section("Formation Modifiers", "Formation Modifiers", "What each formation does to attacks and defence."),
    Section("Targeting", "Targeting", "Effects aimed at one character go at the commander or a special character."),
    Section("Immunities", "Immunities", "What a unit ignores: wound penalties, knockdown and the like."),
    Section("Declaration of War", "Declaration of War", "Join War, which starts the long ticks."),
    Section("Action Options", "Action Options", "Each action's Speed in long ticks and its DV penalty."),
    Section("Move", "Move", "Yards a long tick by formation."),
    Section("Terrain Effects", "Terrain Effects", "Cover, difficult and extreme ground."),
    Section("Cavalry", "Cavalry", "Mounts' speeds and Valor."),
    Section("Dash", "Dash", "A faster move at a cost in Endurance."),
    Section("Guard", "Guard", "Waiting and watching."),
    Section("Inactive", "Inactive", "A unit that can do nothing."),
    Section("Change Formation", "Change Formation", "Taking a new formation, and scattering under missile fire."),
    Section("Disengage", "Disengage", "Breaking away from an engagement."),
    Section("Turn", "Turn", "Facing a new way; attacks from behind."),
    Section("Split Unit", "Split Unit", "One unit becomes two under a new commander."),
    Section("Merge Units", "Merge Units", "Two units become one."),
    Section("Signal Units", "Signal Units", "Passing orders to other units through relays."),
    Section("Rally", "Rally", "Organization, numbers and second wind."),
    Section("Activate Charm", "Activate Charm/Combo/Power", "Magic used as a unit's action."),
    Section("Attack", "Attack", "A unit's attack, rolled like a character's."),
    Section("Unit Bonuses", "Unit Bonuses", "The War cap, ratings and Might added to a commander's roll."),
    Section("Ranged Attacks", "Ranged Attacks", "Volleys, ammunition and range."),
    Section("Enveloping", "Enveloping", "A larger unit surrounding a smaller one in close combat."),
    Section("Attacking Commanders", "Attacking Commanders and Special Characters",
            "Called shots at the characters inside a unit."),
    Section("Initiate Duel", "Initiate Duel", "Calling out a character to single combat."),
    Section("Unit Damage", "Unit Damage", "The unit's health track, minimum damage and Magnitude loss."),
    Section("Casualties", "Casualties", "What becomes of named members after losses."),
    Section("Mob Rule", "Mob Rule", "A unit that has lost its leader."),
    Section("Exhaustion", "Exhaustion", "Endurance lost after each attack, and what makes it likelier."),
    Section("Healing and Recruitment", "Healing and Recruitment", "Regaining Magnitude between battles."),
    Section("Hesitation and Rout", "Hesitation and Rout", "Rout checks, their events, and the cost of failing."),
    Section("Special Character Actions", "Special Character Actions", "Special characters acting on their own."),
)

_E: tuple[Ruling, ...] = (
    Ruling("E1", "Dice", (CORE,),
           "Pools of d10: 7 to 9 is a success and 10 is two, except on damage rolls where a 10 counts "
           "once. By default an extra's 10 also counts twice. Dice are typed or rolled from the seed, "
           "and the log says which. A pool of 0 or less rolls no successes and cannot botch.",
           ("extras_double_tens",)),
    Ruling("E2", "Difficulty", (CORE,),
           "Successes at or above the difficulty succeed, the excess being the threshold. No success "
           "with a 1 showing is a botch. Automatic successes add on and rule out a botch; at difficulty "
           "0 only a botch fails. A botch is judged on the dice before any external penalty."),
    Ruling("E3", "Penalties", (CORE,),
           "An internal penalty takes dice from the pool before the roll; an external one takes "
           "successes away after it, before DV. Net successes never drop below 0."),
    Ruling("E4", "Join War", (CORE, "Declaration of War"),
           "Each unit rolls Wits + War less its Magnitude (a solo unit or a lone special character "
           "Wits + Awareness). The most successes acts on long tick 0, the rest on the best total "
           "minus their own, never later than tick 6."),
    Ruling("E5", "Timeline", (CORE, "Action Options"),
           "A unit acting on tick t with an action of Speed s acts again on t + s, keeping that "
           "action's DV penalty until then. With onslaught on, each attack suffered since its last "
           "action costs another 1 DV. Actions of Speed 0 are reflexive.",
           ("onslaught",)),
    Ruling("E6", "Orders on the same tick", (CORE,),
           "By default every order of one tick rolls against the state at the tick's start, and the "
           "results then land in sheet order. The other reading applies each order in full before the "
           "next.",
           ("same_tick",)),
    Ruling("E7", "Attack", (CORE, "Attack"),
           "Roll, add automatic successes, take off external penalties and then DV; a tie with the DV "
           "misses. Raw damage is Strength + weapon + the successes left; Hardness at or above it "
           "stops it. Damage dice are raw less soak, never below the minimum (E9), one level a success."),
    Ruling("E8", "Defense Values", (CORE,),
           "Parry is half of Dexterity + Ability + weapon Defense, Dodge half of Dexterity + Dodge + "
           "Essence, rounded up from Essence 2 and down at Essence 1; the other reading always rounds "
           "up.",
           ("dv_round",)),
    Ruling("E9", "Soak", (CORE, "Unit Damage"),
           "Natural soak is Stamina against bashing, half Stamina rounded down against lethal, none "
           "against aggravated; armour adds its soak, its lethal soak covering aggravated too. Minimum "
           "damage is the attacker's Essence, or 1 against Hardness to that damage type."),
    Ruling("E10", "Health", (CORE,),
           "A character's track is -0, -1, -1, -2, -2, -4 and Incapacitated unless one is typed; an "
           "extra's is -1, -3 and Incapacitated. The worst marked level gives an internal wound penalty."),
    Ruling("E11", "Action table", (CORE, "Action Options"),
           "Speed and DV penalty: Attack at the weapon's Speed (5 if none) and -1, Move 0/-0, Dash 3/-2, "
           "Guard 3/-0, Aim 3/-1, Inactive 5 with DV 0, anything else 5/-1. A chronicle may override "
           "an action's Speed or DV penalty by its label.",
           ("inactive_dv", "speed", "dv")),
)

_X_UNITS: tuple[Ruling, ...] = (
    Ruling("X1", "Solo and complementary units", ("Units",),
           "A solo unit is one character: Magnitude 0, Drill 0, its own health and penalties. A "
           "complementary unit is its commander's traits with the unit's traits added."),
    Ruling("X2", "Magnitude", ("Magnitude",),
           "The headcount is 1 for the commander, 1 per extra and, for other members, a third of their "
           "health levels rounded up (a heroic mortal weighs 3) or a typed weight; the other reading "
           "sums exact thirds and rounds the total up. The table's rows run 1 to Magnitude 0, up to 10 "
           "to 1, ... up to 10,000 to 9, and double past that. After a loss or a rally the headcount is "
           "the least of the new row.",
           ("heroic_weight",)),
    Ruling("X3", "Drill", ("Drill", "Special Characters"),
           "Typed from 0 to 5. Every use takes the effective Drill: 2 less in communication failure "
           "(X11), never below 0."),
    Ruling("X4", "Endurance", ("Endurance",),
           "Effective Drill + the members' average Stamina (or the commander's, by house rule); a solo "
           "unit's is Stamina + Resistance. Unrested troops lose their average armour fatigue; never "
           "below 0. A unit at 0 takes -2 internal on every roll. Averages here round down on their own.",
           ("endurance_stamina",)),
    Ruling("X5", "Might", ("Might",),
           "The table value plus the best equipment bonus; it also adds to the commander's Essence "
           "against magic."),
    Ruling("X6", "Attack Ratings", ("Attack Rating",),
           "Close and Ranged Rating: half of average Dexterity + average Ability + the Accuracy of the "
           "weapon most carry, rounded down; with mixed weapons the average Accuracy counts, or none by "
           "house rule. With no close weapons the Close Rating is 0 and no close attack is possible.",
           ("mixed_accuracy",)),
    Ruling("X7", "Damage Ratings", ("Attack Damage",),
           "A third of average Strength + average weapon damage, rounded up, of the weapon's type. "
           "Strength counts for ranged weapons only where the core rules add it: by default for Thrown, "
           "not for Archery.",
           ("ranged_strength_archery", "ranged_strength_thrown")),
    Ruling("X8", "Armor", ("Armor",),
           "A third of the members' average full lethal soak, rounded up. The mobility penalty is the "
           "average. Hardness is the average rounded down when every member has that much, otherwise 0 "
           "(or the least, by house rule).",
           ("hardness_fallback",)),
    Ruling("X9", "Shields", ("Shields",),
           "The commander's shield counts only when most members carry one."),
    Ruling("X10", "Morale", ("Morale", "Cavalry"),
           "The lower of the members' average Valor and the commander's, and for mounted troops also "
           "their steeds' (horse 2, simhata 4, elephant 3 unless typed). Perfect Morale passes every "
           "Morale check except Mob Rule's (X39)."),
    Ruling("X11", "Special characters", ("Special Characters",),
           "Up to twice the Magnitude besides the commander: heroes, sorcerers and relays. A hero may "
           "lend her Close Rating and a sorcerer her Ranged Rating, within the War cap (X28). A unit of "
           "Magnitude 3+ with fewer relays than its Magnitude is in communication failure: Unordered "
           "only, Drill -2. Relays over the limit fade when Magnitude falls; excess characters leave "
           "when it rises and at the end (the last added, unless the Tracker picks)."),
    Ruling("X12", "Immunities", ("Immunities",),
           "No wound penalties (neither the track's nor the commander's), no internal penalty not shared "
           "by every member, no grappling. Knocking the whole unit back or down calls for a rout check "
           "at +0."),
    Ruling("X13", "Formations", ("Formation",),
           "Effective Drill each needs: Unordered 0, Skirmish 1, Relaxed 1 (the default), Close 2. A "
           "unit whose Drill falls below its formation's need becomes Unordered, unless the house rule "
           "says otherwise.",
           ("drill_loss_unorders",)),
    Ruling("X14", "Formation effects", ("Formation", "Formation Modifiers"),
           "Close doubles the Close Rating and its War cap on close attacks, doubles shield and cover "
           "against close attacks, doubles a ranged attacker's Magnitude in X30 and makes rout 2 "
           "easier. Relaxed doubles shield and cover against ranged attacks. Skirmish doubles them "
           "always, gives +3 DV against ranged attacks, doubles a close attacker's Magnitude (triples "
           "it from Close) and makes rout 2 harder, as does Unordered. The Parry bonus of X29 is not "
           "doubled by default.",
           ("close_doubles_parry",)),
    Ruling("X15", "Movement", ("Move", "Cavalry"),
           "Yards a long tick are average Dexterity less mobility, times 30 Unordered, 100 Skirmish, 70 "
           "Relaxed or 40 Close (100 for a solo unit). Mounted troops go at the mount's pace (horse "
           "200, simhata 400, elephant 100; chariots two thirds and drawn artillery half the team's) "
           "whatever the formation, unless the house rule scales it.",
           ("mount_formation_multiplier",)),
    Ruling("X16", "Terrain", ("Terrain Effects",),
           "Typed per unit. Only the best cover counts, by the largest step reached: 25% gives 1 DV, 50% "
           "2, 75% 3, 90% 4. Difficult ground forbids Dash and wheels and halves horses; extreme ground "
           "halves infantry and stops anything larger."),
)

_X_ACTIONS: tuple[Ruling, ...] = (
    Ruling("X17", "Move", ("Move",),
           "Speed 0, no DV penalty, reflexive, once a long tick; not while engaged or hesitating. A "
           "command roll, where one is asked for, is Charisma + War of the commander (or the best "
           "relay's where allowed) against max(1, Magnitude - Drill) plus its modifiers."),
    Ruling("X18", "Dash", ("Dash",),
           "Speed 3, DV -2. A solo unit needs no roll; any other must not be Unordered and makes a "
           "command roll. Success moves (average Dexterity - mobility + 6) times the formation's factor "
           "in yards (double mounted) and costs Endurance equal to the average armour fatigue; failure "
           "is a plain Move."),
    Ruling("X19", "Guard, Aim and Inactive", ("Guard", "Inactive"),
           "As E11; a unit is Inactive only when something forces it."),
    Ruling("X20", "Change Formation", ("Change Formation",),
           "Speed 5, DV -1: a command roll (a relay may make it) needing the Drill of X13, 1 harder if "
           "attacked since its last action or 2 if engaged, taking effect at once. After a ranged "
           "attack on it, the unit may make the same roll reflexively to scatter into Skirmish before "
           "the next tick, then checks rout at +0 (+2 in Skirmish)."),
    Ruling("X21", "Disengage", ("Disengage",),
           "Speed 0, reflexive: Wits + War + Drill less Magnitude, against the enemy's Drill + 3 (3 "
           "more if enveloped, 1 more if enveloping). Success breaks away and calls for a rout check at "
           "+1."),
    Ruling("X22", "Turn", ("Turn",),
           "Speed 3, DV -1, a command roll, for a turn of 90 degrees or more. An attack from straight "
           "behind is unexpected: DV 0."),
    Ruling("X23", "Split Unit", ("Split Unit",),
           "Speed 3, DV -1, with a hero to command the new unit. Magnitudes follow the headcounts and "
           "the parent loses at least one dot; special characters may follow up to the new limit. Each "
           "unit then makes a command roll (2 harder if the parent was engaged); failing, it hesitates "
           "and becomes Unordered. Sending out a single special character is Speed 0."),
    Ruling("X24", "Merge Units", ("Merge Units",),
           "Speed 3, DV -1. Both commanders roll; if either fails there is no merge and a failed unit "
           "hesitates. On success the headcounts add and the larger unit's commander leads unless both "
           "choose otherwise; excess special characters leave. Swapping special characters is "
           "difficulty 1 (failing only delays it); a solo unit joining as one needs no roll."),
    Ruling("X25", "Signal Units", ("Signal Units",),
           "Speed 3, no DV penalty: orders reach as many units as the signaller has relays."),
    Ruling("X26", "Rally", ("Rally",),
           "Speed 4, DV -1; the roll is Charisma + the better of War and Performance, with no War cap. "
           "Organization adds a relay within the limit. Numbers adds a dot of Magnitude when this unit, "
           "or an allied unit of greater Magnitude, lost one earlier in the battle, each lost dot "
           "feeding one rally by default; the Storyteller may veto it, and too few relays leaves the "
           "unit Unordered. Second Wind restores Endurance by Endurance + max(1, Drill), never above "
           "Magnitude.",
           ("rally_pool",)),
    Ruling("X27", "Spells and duels", ("Activate Charm", "Initiate Duel"),
           "Casting is Speed 5, DV -2 (the unit's action when the commander casts); its effect is typed. "
           "Calling a duel counts as an attack, and an unwilling target must first be struck by a "
           "called shot without unit bonuses, doing no damage. A duel halts the long ticks until the "
           "Storyteller types its outcome."),
)

_X_ATTACK: tuple[Ruling, ...] = (
    Ruling("X28", "The attack pool and the War cap", ("Unit Bonuses",),
           "Commander's Dexterity + the lesser of Ability and War + Accuracy; the cap applies to every "
           "unit action's pool, not to DV. After the roll add the lesser of Rating and War as automatic "
           "successes (in Close on a close attack, twice each), then Might. A solo unit rolls Dexterity "
           "+ Ability + Accuracy with no cap and no bonus."),
    Ruling("X29", "Defence", ("Unit Bonuses", "Formation Modifiers"),
           "The better of Parry (the commander's + half the Close Rating rounded down + shield) and Dodge "
           "(the commander's), then cover, formation, the action's penalty and onslaught; never below "
           "0. Soak per type is the commander's natural soak + the unit's Armor, his own armour "
           "ignored by default; Hardness as X8.",
           ("commander_armor",)),
    Ruling("X30", "Magnitude difference", ("Unit Bonuses", "Formation Modifiers"),
           "Attacker's Magnitude (doubled or tripled by X14) less the defender's: a positive difference "
           "adds up to 3 automatic successes, a negative one is an external penalty of up to 3."),
    Ruling("X31", "Volleys", ("Ranged Attacks",),
           "A volley spends 3 ammunition (4 volleys' worth when mobile, 7 when fortified, unless typed); "
           "sorcerers' shots too. The range is the unit's weapon's, or the sorcerer's own."),
    Ruling("X32", "Enveloping and called shots", ("Enveloping", "Attacking Commanders"),
           "Envelop: close attacks only, Magnitude at least the target's + 1, -2 external; a hit locks "
           "both until one disengages. A called shot at a commander or special character is -X/2 "
           "(rounded up) external, X being the lower of Drill and Magnitude against an Unordered unit, "
           "else the higher (a sorcerer's Magnitude doubled first); a commander only by ranged attack or "
           "after an engagement on an earlier tick. The victim's own DV, soak and track apply, the "
           "attacker keeps his unit bonuses, and a slain commander is replaced by a named hero or X39."),
    Ruling("X33", "Unit damage", ("Unit Damage",),
           "Raw damage is the commander's Strength (as X7 allows) + his weapon's damage + the Damage "
           "Rating + the threshold. The minimum is the attacker's Magnitude (a solo unit's Essence, with "
           "E9's Hardness rule). Levels go on the unit's track: the commander's full track, whatever his "
           "own wounds."),
    Ruling("X34", "Magnitude loss", ("Unit Damage",),
           "With L levels marked, d new ones and a track of H, the unit loses (L + d)/H dots rounded "
           "down and keeps the remainder marked. At Magnitude 0 the rest is dropped: members and special "
           "characters die and the commander fights on alone with his own health. Any loss from one "
           "attack makes one rout check at +0."),
    Ruling("X35", "Rout check", ("Hesitation and Rout",),
           "Pool: Morale less (Magnitude - Drill), or plus it by house rule; Drill above Magnitude adds "
           "dice. Difficulty: 1 + the event + the formation, at least 0. Events: first ranged attack "
           "since its last action +0; flame or Essence missiles +1; a spell +1 a Circle; becoming "
           "engaged +0, +1 against a superior or supernaturally led enemy, +2 against an overwhelming "
           "or supernatural one (by default judged on raw Magnitude and Might); disengaging +1; meddling "
           "in a duel +2. Rout losses trigger no further check.",
           ("rout_dice",)),
    Ruling("X36", "Hesitation", ("Hesitation and Rout",),
           "A failed rout check bars Move and Dash until the unit next acts and costs max(1, difficulty "
           "- successes) dots at once; any such loss clears the track, and relays over the limit fade."),
    Ruling("X37", "Exhaustion", ("Exhaustion",),
           "After each attack, every unit in it loses 1 Endurance unless a reflexive command roll, "
           "always made, succeeds. Difficulty: the average armour fatigue, -1 for Morale 3+ or -2 for "
           "perfect Morale (not both), +2 engaged, +1 if it charged last, +1 to +3 for the worst "
           "weather; at least 1."),
    Ruling("X38", "Special characters alone", ("Special Character Actions",),
           "They join the timeline by Wits + Awareness or act on a unit action, and get none of the "
           "unit's benefits except that attacking them needs a called shot; a Guard brings them back "
           "into line. A hero who fights away from her unit's engagement becomes a solo unit."),
    Ruling("X39", "Mob Rule", ("Mob Rule",),
           "By default a unit that loses its commander fights on (the other reading disbands it): "
           "Unordered, led by a typed average member (by default an extra, 3 levels, the track reset); "
           "relays fade and sorcerers leave or fade. It only carries on, Guards or strikes back, and no "
           "called shot can be aimed at it. Each long tick it first makes a rout check on Morale (5 "
           "dice if perfect), difficulty the number of such checks before.",
           ("mob_rule",)),
    Ruling("X40", "Casualties", ("Casualties",),
           "After a unit loses dots, each named rank-and-file member rolls Wits + Willpower against the "
           "largest loss in one event: failure is death, a botch maiming. Survivors roll again against "
           "the total lost; failure costs 1d10 unsoakable lethal levels, and mortals are flagged for "
           "infection."),
    Ruling("X41", "Healing", ("Healing and Recruitment",),
           "Regaining a dot takes the current Magnitude + 1 days, up to the starting Magnitude; the "
           "first clears the track. Endurance is full at the start of every battle."),
)

_X_FOUND: tuple[Ruling, ...] = (
    Ruling("X42", "Rout pool after a loss", ("Hesitation and Rout", "Unit Damage"),
           "The rout check a Magnitude loss calls for uses the unit's Magnitude after the loss."),
    Ruling("X43", "Both sides of an engagement", ("Hesitation and Rout",),
           "Becoming engaged is a rout event for both units, the one closing and the one closed on, "
           "each at its own modifiers; perfect Morale skips it as ever."),
    Ruling("X44", "One attack, several events", ("Hesitation and Rout",),
           "When one attack raises two rout events against a unit, it makes one check at the hardest "
           "difficulty, and the log names every trigger; one check per event means per attack."),
    Ruling("X45", "Second Wind's ceiling", ("Rally",),
           "Second Wind only gives back Endurance that was lost: never above the battle's starting "
           "Endurance, nor above Magnitude, and it never lowers it."),
    Ruling("X46", "The duel's called shot", ("Initiate Duel", "Attacking Commanders"),
           "The challenger rolls his own pool, without unit bonuses, the Magnitude difference or the War "
           "cap, against the target's own DV."),
    Ruling("X47", "A refused order", ("Action Options", "Guard"),
           "A unit whose only order on its tick is refused Guards instead (Speed 3) and acts again when "
           "that comes round; the log gives the reason."),
    Ruling("X48", "Magnitude 0 by rout", ("Hesitation and Rout", "Casualties"),
           "Named members of a unit routed down to Magnitude 0 flee rather than die; the casualty rolls "
           "of X40 cover the dots lost, and the commander stays on as a solo unit."),
    Ruling("X49", "Aim", (CORE, "Action Options"),
           "Each long tick in a row spent aiming at one target adds a die, up to 3; any other action, "
           "or becoming engaged, loses it."),
    Ruling("X50", "Split and merge in detail", ("Split Unit", "Merge Units"),
           "On a split the parent keeps its old headcount less the new unit's, takes its Magnitude from "
           "the table (at least one dot fewer); the new unit gets the parent's Drill and acts on the "
           "parent's next tick. On a merge the smaller unit's commander joins as a special character if "
           "there is room, otherwise becomes a solo unit."),
    Ruling("X51", "Incapacitated special characters", ("Unit Damage", "Attacking Commanders"),
           "A special character a called shot leaves Incapacitated dies if the unit is engaged (no "
           "quarter is given); otherwise they are out of the battle but alive."),
    Ruling("X52", "Solo units and rout", ("Hesitation and Rout", "Units"),
           "A solo unit never checks rout, having no Morale pool to roll at Magnitude 0; its player "
           "chooses whether to withdraw."),
)

RULINGS: tuple[Ruling, ...] = _E + _X_UNITS + _X_ACTIONS + _X_ATTACK + _X_FOUND

HOUSE_RULES: tuple[HouseRule, ...] = (
    HouseRule("extras_double_tens", "true", "true, false", "E1", "an extra's 10 counts as two successes (false: one)"),
    HouseRule("heroic_weight", '"ceil"', '"ceil", "exact"', "X2",
              "each member weighs a third of its health levels rounded up, or the thirds are summed first"),
    HouseRule("endurance_stamina", '"members"', '"members", "commander"', "X4",
              "Endurance takes the members' average Stamina, or the commander's"),
    HouseRule("mixed_accuracy", '"average"', '"average", "none"', "X6",
              "with mixed weapons the ratings take the average Accuracy, or none"),
    HouseRule("ranged_strength_archery", "false", "true, false", "X7", "Strength adds to Archery damage"),
    HouseRule("ranged_strength_thrown", "true", "true, false", "X7", "Strength adds to Thrown damage"),
    HouseRule("hardness_fallback", '"zero"', '"zero", "minimum"', "X8",
              "Hardness when not every member has the average: 0, or the least"),
    HouseRule("dv_round", '"essence"', '"essence", "up"', "E8",
              "DVs round up from Essence 2 and down at Essence 1, or always up"),
    HouseRule("close_doubles_parry", "false", "true, false", "X14", "Close formation also doubles X29's Parry bonus"),
    HouseRule("commander_armor", "false", "true, false", "X29", "the commander's own armour adds to the unit's soak"),
    HouseRule("drill_loss_unorders", "true", "true, false", "X13",
              "a unit whose Drill falls below its formation's need becomes Unordered"),
    HouseRule("mount_formation_multiplier", "false", "true, false", "X15",
              "a mount's yards are scaled by the formation's multiplier"),
    HouseRule("onslaught", "true", "true, false", "E5", "-1 DV for each attack suffered since the unit last acted"),
    HouseRule("same_tick", '"simultaneous"', '"simultaneous", "sheet_order"', "E6",
              "a tick's orders roll against its start, or each applies before the next"),
    HouseRule("inactive_dv", "0", "whole number", "E11", "the DV of an Inactive unit"),
    HouseRule("speed", "{}", "action label to Speed (`speed.Attack: 4`)", "E11",
              "an action's Speed, over the table (battle files only)"),
    HouseRule("dv", "{}", "action label to DV penalty (`dv.Dash: 1`)", "E11",
              "an action's DV penalty, over the table (battle files only)"),
    HouseRule("rout_dice", '"penalty"', '"penalty", "bonus"', "X35",
              "the rout pool subtracts Magnitude - Drill from Morale, or adds it"),
    HouseRule("mob_rule", "true", "true, false", "X39", "a leaderless unit fights on under Mob Rule (false: it disbands)"),
    HouseRule("rally_pool", "true", "true, false", "X26", "each dot lost feeds one rally for numbers"),
)

REFERENCE = Reference("exalted", "Exalted 2e mass combat", RULINGS, SECTIONS, HOUSE_RULES,
                      cite_example="X34, X35")


if __name__ == "__main__":  # pragma: no cover - the maintainer's regeneration step
    from pathlib import Path

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules/exalted.md")
    target.write_text(REFERENCE.render_document(target.read_text(encoding="utf-8")), encoding="utf-8")
