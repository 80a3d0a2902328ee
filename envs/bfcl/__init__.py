"""BFCL's multi-turn tasks (the Berkeley Function Calling Leaderboard, package `bfcl-eval`) played
under our feedback conditions: its data, its eight backend classes and its own checker, read from
the installed package; nothing of its inference or eval runners (they need tree-sitter and more)."""
