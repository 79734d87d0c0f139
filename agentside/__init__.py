"""The agents' side: how real runtimes write a state directory (`hud agent ...`).

Everything here writes through `store.writers.agent` only, so an agent never writes a `.toml`.
Three ways in: shell subcommands (`agentside.commands`), a Claude Code hook
(`agentside.commands.claude_hook`) and a stdio MCP server (`agentside.mcp_server`). The
HUD never imports this package: only the router `cli.main` dispatches `hud agent ...` to
`agentside.cli`, lazily.
"""
