"""The offline model: rules in place of a language model. Use it through `stepwise.offline.api` only."""
