"""Where the battle lives in a spreadsheet: the layout map, the backend seam, reader and writer."""
