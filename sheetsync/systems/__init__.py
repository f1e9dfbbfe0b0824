"""The rule systems, one package each, with the same rooms in each (docs/ARCHITECTURE.md)."""
