"""`hud serve`: the HUD over SSH, one HUD process on its own pty per session.

`keys` holds the host key and reads the authorized keys with their roles, `child` runs
one HUD on a pty, `server` is the SSH server around them.
"""
