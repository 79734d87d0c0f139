"""The `hud` command line: the router (`cli.main`), its subcommands
(`cli.commands`) and the launcher that opens the HUD (`cli.launch`). The HUD (its
app, screens and widgets) never imports this package."""
