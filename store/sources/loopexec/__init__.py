"""loopexec runs (`.loopexec/`), read-only: the receipts (`runs`) and the source.

The folder's name is here, where the registry reads it without loading the source."""

FOLDER = ".loopexec"
