"""Async client for an OpenAI-compatible ``/chat/completions`` endpoint.

One call = one judged group: up to ``1 + max_retries`` HTTP attempts, each
bounded by ``timeout_s`` as a whole (connect + wait + read), at most
``max_concurrency`` attempts in flight across the client.  Every failure ends
in :class:`JudgeFault` with a ``reason`` that becomes a metric bucket:

==============  ========================================  =========
reason          cause                                      retried?
==============  ========================================  =========
``timeout``     no complete answer within ``timeout_s``    yes
``connect``     connection refused / unreachable host      yes
``dropped``     server closed the connection mid-request   yes
``http_429``    rate limited (waits ``Retry-After``)       yes
``http_5xx``    server error (and 408)                      yes
``http_4xx``    other client errors (401, 404, ...)        no
``malformed``   the body is not a chat-completion JSON     no
``empty``       the completion has no text                 no
==============  ========================================  =========

Waits between attempts: ``Retry-After`` when the server sends one (seconds or
an HTTP date), otherwise ``backoff_s * 2**k`` capped at ``max_backoff_s``.  A
``Retry-After`` longer than ``max_backoff_s`` ends the call at once: the
training step must not wait on the server's schedule.

Optional request parameters adapt to the server, once each, remembered for the
client's life: a 400 whose body names ``response_format`` drops JSON mode (the
prompt still asks for JSON), one naming ``max_tokens`` sends the limit as
``max_completion_tokens`` instead (newer hosted APIs), one naming
``temperature`` drops it (models with a fixed temperature).  Such a resend is
not a retry.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from dataclasses import dataclass

import httpx

from verl_focal.partition.judge.config import JudgeConfig

__all__ = ["JudgeFault", "ChatClient", "CallStats", "retry_after_seconds"]

class JudgeFault(Exception):
    """A judged group failed; ``reason`` is one of the buckets in the module docstring."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass
class CallStats:
    requests: int = 0  # HTTP attempts made
    retries: int = 0  # attempts after the first
    waited_s: float = 0.0  # time slept between attempts
    finish_reason: str | None = None  # of the last completion received


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110 10.2.3: delay-seconds or HTTP-date)."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _content_of(body: object) -> str | None:
    """``choices[0].message.content`` (string or list of text parts); raises ``malformed``."""
    try:
        message = body["choices"][0]["message"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        raise JudgeFault("malformed", "the body has no choices[0].message") from None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if content is not None and not isinstance(content, str):
        raise JudgeFault("malformed", f"message.content is a {type(content).__name__}")
    return content


class ChatClient:
    """Must be used from one asyncio event loop (the partitioner's background loop)."""

    def __init__(self, config: JudgeConfig, api_key: str | None) -> None:
        self.config = config
        self._api_key = api_key
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.json_mode = bool(config.json_mode)
        self.send_temperature = True
        self.tokens_param = "max_tokens"
        self._http: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"ChatClient(url={self.url!r}, model={self.config.model!r})"

    def _ensure(self) -> None:
        if self._http is None:
            c = self.config
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(c.timeout_s),
                limits=httpx.Limits(max_connections=c.max_concurrency, max_keepalive_connections=c.max_concurrency),
                trust_env=False,  # no proxies from the environment: the judge URL is what the config says
            )
            self._sem = asyncio.Semaphore(c.max_concurrency)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _body(self, messages: list[dict]) -> dict:
        body = {"model": self.config.model, "messages": messages, self.tokens_param: self.config.max_tokens}
        if self.send_temperature:
            body["temperature"] = self.config.temperature
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _adapt(self, error_text: str) -> bool:
        """Adapt one optional parameter named in a 400's body (see the module docstring)."""
        if self.json_mode and "response_format" in error_text:
            self.json_mode = False
            return True
        if self.tokens_param == "max_tokens" and "max_tokens" in error_text:
            self.tokens_param = "max_completion_tokens"
            return True
        if self.send_temperature and "temperature" in error_text:
            self.send_temperature = False
            return True
        return False

    async def complete(self, messages: list[dict], stats: CallStats) -> str:
        """The completion text for ``messages``; raises :class:`JudgeFault` after the retry policy."""
        self._ensure()
        assert self._http is not None and self._sem is not None
        c = self.config
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        attempt = 0
        while True:
            stats.requests += 1
            wait: float | None = None
            try:
                async with self._sem:
                    resp = await asyncio.wait_for(
                        self._http.post(self.url, json=self._body(messages), headers=headers), timeout=c.timeout_s
                    )
                status = resp.status_code
                if status == 200:
                    try:
                        body = resp.json()
                    except ValueError:
                        raise JudgeFault("malformed", "the response body is not JSON") from None
                    content = _content_of(body)
                    try:
                        stats.finish_reason = body["choices"][0].get("finish_reason")
                    except (AttributeError, KeyError, IndexError, TypeError):
                        stats.finish_reason = None
                    if content is None or not content.strip():
                        raise JudgeFault("empty", "the completion has no text")
                    return content
                if status == 400 and self._adapt(resp.text):
                    continue  # resend with the parameter the server objected to adapted
                if status == 429:
                    fault = JudgeFault("http_429", "rate limited")
                    wait = retry_after_seconds(resp.headers.get("retry-after"))
                elif status >= 500 or status == 408:
                    fault = JudgeFault("http_5xx", f"HTTP {status}")
                    wait = retry_after_seconds(resp.headers.get("retry-after"))
                else:
                    raise JudgeFault("http_4xx", f"HTTP {status}")
            except JudgeFault:
                raise
            except (asyncio.TimeoutError, httpx.TimeoutException):
                fault = JudgeFault("timeout", f"no answer within {c.timeout_s} s")
            except httpx.ConnectError as e:
                fault = JudgeFault("connect", type(e).__name__)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                fault = JudgeFault("dropped", type(e).__name__)
            except httpx.HTTPError as e:
                fault = JudgeFault("dropped", type(e).__name__)
            if attempt >= c.max_retries:
                raise fault
            if wait is None:
                wait = min(c.backoff_s * (2**attempt), c.max_backoff_s)
            elif wait > c.max_backoff_s:
                raise JudgeFault(fault.reason, f"{fault.detail}; Retry-After {wait:.1f} s exceeds max_backoff_s")
            attempt += 1
            stats.retries += 1
            stats.waited_s += wait
            await asyncio.sleep(wait)
