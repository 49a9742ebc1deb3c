"""Language models behind one small interface: Anthropic's Messages API and the offline model."""

from stepwise.model.errors import ModelPermanentError, ModelTransientError
from stepwise.model.types import ChatModel, ModelRequest, ModelResponse, Usage

__all__ = [
    "ChatModel",
    "ModelPermanentError",
    "ModelRequest",
    "ModelResponse",
    "ModelTransientError",
    "Usage",
]
