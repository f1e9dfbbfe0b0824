"""The hex wargame, in the rooms every system has (docs/ARCHITECTURE.md): ``rules`` (the engine,
standard library only), ``files`` (battle files), ``tracker`` (the sheet layout and steps),
``views``, ``report``, ``forecast``, ``reference`` and ``system`` (the RuleSystem object)."""
