"""The generic middle between a rule system and a spreadsheet: the backend seam
(``backend``), reading and writing blocks by column key with codecs (``table``), and drawing
a tracker from its layout data (``draw``).  Nothing here imports a rule system: a test
enforces it, as the rules-purity test does for the engines."""
