"""loopexec runs (`.loopexec/`), read-only: the receipts (`runs`) and the source."""
