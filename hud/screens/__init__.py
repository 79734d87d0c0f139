"""The HUD's screens."""
