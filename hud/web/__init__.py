"""`hud web`: the HUD in a browser, one HUD process per browser session (textual-serve).

`tokens` reads the personal tokens (hashed) with their names and roles, `sessions` keeps
who signed in, `server` is the web server: sign-in, the checks of every request and
websocket, and the HUD each websocket runs (started as `hud serve` starts its own,
`hud.serve.child`). The server holds no writer and draws nothing: the HUD does.
"""

WEB_DRIVER = "textual.drivers.web_driver:WebDriver"
"""`TEXTUAL_DRIVER` of the HUDs `hud web` runs (as textual-serve sets it): Textual's web
driver, which draws for the browser on stdout and reads its keys from stdin."""
