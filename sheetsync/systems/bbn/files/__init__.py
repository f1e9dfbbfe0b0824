"""Battle files in and out (``loader``) and their JSON Schema (``schema``): the edge where
pydantic validates what a person typed."""
