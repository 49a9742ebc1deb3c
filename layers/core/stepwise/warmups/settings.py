"""The warm-ups' settings (docs/performance.md), read by the webhook only: after this long without a turn in
the chat, it starts the containers of CallModel, FinishTurn (and RunTools) in parallel; 0 turns them off."""

from typing import Annotated

from annotated_types import Interval

from stepwise.config import EnvSettings


class WarmupSettings(EnvSettings):
    """WARMUP_AFTER_QUIET_SECONDS, WARMUP_TIMEOUT_SECONDS and the functions warmed up (the template sets
    them)."""

    warmup_after_quiet_seconds: Annotated[int, Interval(ge=0, le=86_400)] = 300
    warmup_timeout_seconds: Annotated[float, Interval(gt=0, le=5)] = 0.25
    call_model_function: str = ""
    finish_turn_function: str = ""
    run_tools_function: str = ""
