"""SMALL Protocol v1.0.0 workspaces (`.small/`): load, validate, show, and edit what humans own."""
