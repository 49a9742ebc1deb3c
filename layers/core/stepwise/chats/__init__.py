"""Per-chat bookkeeping for long-term memory: message counts, the summary watermark, the rolling summary."""

from stepwise.chats.store import ChatRecord, ChatStore

__all__ = ["ChatRecord", "ChatStore"]
