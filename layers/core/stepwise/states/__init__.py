"""The states of a turn: what each state of the state machine does, free of Lambda and AWS details."""
