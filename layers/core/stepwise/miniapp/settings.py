"""The Mini App's limits (docs/app.md), read by the App function only."""

from typing import Annotated

from annotated_types import Interval

from stepwise.config import EnvSettings


class AppSettings(EnvSettings):
    """APP_REQUESTS_PER_MINUTE: a user's requests to the page's API per minute."""

    app_requests_per_minute: Annotated[int, Interval(ge=1, le=10_000)] = 60
