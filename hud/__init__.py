"""hud package."""
