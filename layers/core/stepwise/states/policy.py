"""One policy per kind of turn: what its model sees (history, prompt sections), which tools it has and how
many rounds, whether it holds the chat, and how it starts, goes on after its tools, and ends. The states ask
the turn's policy; they never test what kind of turn it is.

Four policies: the chat's turn (`ChatTurn`: every kind of `TurnMeta.kind` answered in the chat), an MCP
client's call (`OutsideCallTurn`: a chat's turn whose only step is that call, answered without a model, by
`states.outside_call`), a background job's own execution (`JobTurn`, in `states.job_turn`), and a contact's
messages in an owner's business account drafted into a suggested reply (`SecretaryTurn`, in
`states.secretary_turn`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from stepwise.inbox.outside_call import OutsideCall
from stepwise.secretary.kinds import ContactWrote
from stepwise.states.approve_deny import show_approve_deny
from stepwise.turn_records.models import JobRun

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.services import TurnServices
    from stepwise.states.contracts.base import Next
    from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
    from stepwise.tools.registry import ToolRegistry
    from stepwise.turn.ref import TurnRef
    from stepwise.turn_records.models import ModelStep, TurnKind, TurnMeta


class TurnPolicy(Protocol):
    """What a kind of turn does where the states differ."""

    # Whether the turn answers in the chat: it holds the chat's lease (frees it while it waits for an
    # approval, takes it back after), shows "typing…" and drafts there, and its prompt is the chat's (whose
    # size the next turn's window is chosen with).
    holds_chat: bool
    # Whether the people in the chat see the turn at work: "typing…" and drafts (not in a contact's chat of
    # a business account, where nothing reaches the contact, nor in a background job, which has no chat).
    shows_progress: bool

    def start(self, turn: TurnRef, services: TurnServices) -> Next | None:
        """LoadContext of a turn that does not start from the chat's inbox; None: it does."""
        ...

    def history(self, meta: TurnMeta, services: TurnServices) -> list[StoredMessage]:
        """The conversation the model sees."""
        ...

    def sections(self, meta: TurnMeta, max_steps: int) -> list[str]:
        """The kind's own per-turn sections of the prompt (first among them)."""
        ...

    def tools(self, meta: TurnMeta, services: TurnServices) -> ToolRegistry:
        """The tools the model is offered (whose turn it is decides whose own accounts' tools are in)."""
        ...

    def max_steps(self, services: TurnServices) -> int:
        """The tool rounds the turn may make."""
        ...

    def before_call(self, meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
        """Before a model call: where the turn goes instead of calling the model; None to call it."""
        ...

    def after_call(self, meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
        """After a model call was stored (`steps`: the turn's, with it): where the turn goes instead of where
        the model's answer leads; None: where it leads (its tool calls, or the reply)."""
        ...

    def after_tools(self, meta: TurnMeta, step: ModelStep, services: TurnServices) -> bool:
        """After every call of the step has its result: True when the turn has its reply (no model call)."""
        ...

    def approval_wait(self, services: TurnServices) -> int:
        """How long (seconds) an approval request of the turn waits for the tap."""
        ...

    def show_approval(self, approval_id: str, task_token: str, services: TurnServices) -> int:
        """RequestApproval: show the request (once) and keep the token; the id of the message with buttons."""
        ...

    def finish(self, request: FinishTurnInput, services: TurnServices) -> FinishTurnOutput | None:
        """FinishTurn of a turn that does not end in the chat; None: it sends, saves and frees the chat."""
        ...

    def recover(self, turn: TurnRef, status: str, services: TurnServices) -> FinishTurnOutput | None:
        """RecoverChat of such a turn; None: the chat's recovery (its messages are answered again)."""
        ...


class ChatTurn:
    """A turn in the chat: the chat's history, tools and limits; it starts from the inbox and ends there."""

    holds_chat = True
    shows_progress = True

    def start(self, turn: TurnRef, services: TurnServices) -> Next | None:
        return None

    def history(self, meta: TurnMeta, services: TurnServices) -> list[StoredMessage]:
        return services.stores.messages.between(meta.conversation, meta.first_key, meta.last_key)

    def sections(self, meta: TurnMeta, max_steps: int) -> list[str]:
        return []

    def tools(self, meta: TurnMeta, services: TurnServices) -> ToolRegistry:
        return services.tools.registry_for(meta.scope, meta.has_accounts)

    def max_steps(self, services: TurnServices) -> int:
        return services.settings.model.max_tool_steps

    def before_call(self, meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
        return None

    def after_call(self, meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
        return None

    def after_tools(self, meta: TurnMeta, step: ModelStep, services: TurnServices) -> bool:
        return False

    def approval_wait(self, services: TurnServices) -> int:
        return services.settings.limits.approval_timeout_seconds

    def show_approval(self, approval_id: str, task_token: str, services: TurnServices) -> int:
        return show_approve_deny(approval_id, task_token, self.approval_wait(services), services)

    def finish(self, request: FinishTurnInput, services: TurnServices) -> FinishTurnOutput | None:
        return None

    def recover(self, turn: TurnRef, status: str, services: TurnServices) -> FinishTurnOutput | None:
        return None


class OutsideCallTurn(ChatTurn):
    """An MCP client's call waiting for the user's approval: once it ran (or not), the chat is told what came
    of it, without a model."""

    def after_tools(self, meta: TurnMeta, step: ModelStep, services: TurnServices) -> bool:
        from stepwise.states.outside_call import outside_call_reply  # MCP clients' calls: loaded by theirs

        assert isinstance(meta.kind, OutsideCall)  # this policy is the outside call's (`policy_of`)
        outside_call_reply(meta, meta.kind, step, services)
        return True


CHAT_TURN = ChatTurn()
OUTSIDE_CALL_TURN = OutsideCallTurn()


def policy_of(kind: TurnKind) -> TurnPolicy:
    """The policy of a turn of this kind."""
    match kind:
        case JobRun():
            return job_policy()
        case OutsideCall():
            return OUTSIDE_CALL_TURN
        case ContactWrote():
            return secretary_policy()
        case _:
            return CHAT_TURN


def policy_for(turn: TurnRef) -> TurnPolicy:
    """The policy of a turn known only by its execution's input (before LoadContext, or without its record):
    a background job's execution says so (`TurnRef.job`); the questions a chat's turn is asked from here are
    the same for every kind of it; a contact's chat in a business account has only secretary turns."""
    if turn.job is not None:
        return job_policy()
    return secretary_policy() if turn.account is not None else CHAT_TURN


def job_policy() -> TurnPolicy:
    """A background job's policy (`states.job_turn`)."""
    from stepwise.states.job_turn import JOB_TURN  # the jobs' subsystem: loaded by a job's turns only

    return JOB_TURN


def secretary_policy() -> TurnPolicy:
    """A secretary turn's policy (`states.secretary_turn`)."""
    from stepwise.states.secretary_turn import SECRETARY_TURN  # secretary mode: loaded by its turns only

    return SECRETARY_TURN
