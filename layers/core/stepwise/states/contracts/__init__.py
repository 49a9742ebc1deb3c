"""The inputs and outputs of the state machine's states (kept small: ids and counters), a module per state,
so that a function builds only the models it uses (`base`: what they share, the turn and the decision).

Every state that decides where the turn goes returns a `Next` (`base`); the state machine's one Choice state
(`WhatNext`) reads its `route`. The turn's reference (`TurnRef`) is in `stepwise.turn.ref`, the execution's
input (`TurnStart`) in `stepwise.turn.start`.
"""
