"""Use cases and the shells around them: CLI, Excel buttons, HTTP endpoint, watcher."""
