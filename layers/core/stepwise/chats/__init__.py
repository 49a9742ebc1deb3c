"""Per-chat bookkeeping for long-term memory: message counts, the summary watermark, the rolling summary."""
