"""Where people's accounts are kept and where their sign-ins come back (docs/accounts.md): read by the
functions that list, connect or use accounts."""

from typing import Annotated

from annotated_types import Interval

from stepwise.config import EnvSettings


class AccountSettings(EnvSettings):
    """The accounts' table, this deployment's callback, the SSM parameter of the tokens' key, and how long a
    sign-in may take. Accounts are deployed when the table and the callback are named."""

    accounts_table: str = ""
    oauth_callback_url: str = ""  # GET /oauth/callback on this deployment's HTTP API (OAuthCallbackUrl)
    oauth_key_parameter: str = ""  # a SecureString the functions make on first use (stepwise.accounts.cipher)
    oauth_state_minutes: Annotated[int, Interval(ge=1, le=60)] = 10

    @property
    def deployed(self) -> bool:
        return bool(self.accounts_table and self.oauth_callback_url and self.oauth_key_parameter)
