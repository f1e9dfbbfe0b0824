"""The tracker: its layout as data (``layout``, ``formulas``), the cells it computes
(``cells``) and its steps on any backend (``steps``)."""
