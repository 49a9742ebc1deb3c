"""A `requests` transport adapter that answers from a script, for unit tests of HTTP clients without
sockets: mount it on a real `requests.Session`."""

from __future__ import annotations

import io
import json
from typing import Any

import requests
from requests.adapters import BaseAdapter

# (status, body[, headers]): a body that is not bytes is sent as JSON; or an exception to raise.
Answer = tuple[int, Any] | tuple[int, Any, dict[str, str]] | Exception


class ScriptedAdapter(BaseAdapter):
    """Answers requests from a script, in order; keeps the requests and the time-outs they were sent with."""

    def __init__(self, answers: list[Answer]) -> None:
        super().__init__()
        self.answers = list(answers)
        self.requests: list[requests.PreparedRequest] = []
        self.timeouts: list[Any] = []

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.requests.append(request)
        self.timeouts.append(kwargs.get("timeout"))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, body, *rest = answer
        response = requests.Response()
        response.status_code = status
        response.raw = io.BytesIO(body if isinstance(body, bytes) else json.dumps(body).encode())
        response.headers["Content-Type"] = "application/json"
        response.headers.update(rest[0] if rest else {})
        response.url = request.url or ""
        response.request = request
        return response

    def close(self) -> None:
        pass

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies sent, in order."""
        return [json.loads(request.body or b"{}") for request in self.requests]
