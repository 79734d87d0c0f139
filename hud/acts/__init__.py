"""The human acts: decide a request, edit a document, adjust a budget, create a mission,
edit a SMALL document.

Each act is a function of `store`, a small `Session` (workspace, writer, "wrote",
notify) and, where it asks the human something, a port (`DecideAsk`, `EditAsk`): the
HUD's screens answer with their dialogs (`hud.screens.asking`), `hud decide` with its
flags. Nothing here imports Textual, and nothing else in the app imports
`store.writers.human` (both are import contracts): this package is the HUD's one way to write.
"""
