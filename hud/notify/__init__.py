"""`hud notify` (and `hud serve --notify`): tell people, where they are, what waits for them.

The notifier watches a state directory with the store's own derivation (the same truth
as the HUD and `hud check`) and sends each event once per target through Apprise:
- `events`: what is worth a notification now, derived from a workspace;
- `message`: an event as safe plain text (agent text made inert, lengths bounded);
- `config`: the targets (the person's notify.toml, the workspace's hud.toml, `--to`);
- `sent`: the record of what each target was sent, in the user's state folder;
- `courier`: one target's delivery (filter, rate limit and digest, back-off);
- `notifier`: the watch loop around them.
It holds no writer and draws nothing (an import contract): it only reads the state
directory. docs/notifications.md.
"""
