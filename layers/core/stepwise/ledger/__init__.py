"""The tool-call ledger: one record per tool call with a side effect, so a retry makes the effect once."""
