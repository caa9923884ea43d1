"""What a peer did, as a list of JSON-ready events that tests read back.

Each event is a dict `{"event": NAME, "t": seconds since the log began, ...}`. The log keeps
every event for the peer's lifetime (a test asks for those after an index it remembered), wakes
waiters when one arrives, and copies each to subscribers (the control channel's `subscribe`
streams them as JSON lines). Events are facts the peer observed from its own protocol state,
never values of keys unless the peer was asked to reveal them.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

log = logging.getLogger("peer.events")


class EventLog:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.events: list[dict] = []
        self.subscribers: list[Callable[[dict], None]] = []
        self._changed: asyncio.Event | None = None

    def emit(self, name: str, **fields) -> dict:
        event = {"event": name, "t": round(time.monotonic() - self.started, 4), **fields}
        self.events.append(event)
        log.info("event %s", event)
        for subscriber in list(self.subscribers):
            try:
                subscriber(event)
            except Exception as error:  # a subscriber that went away must not stop the peer
                log.debug("subscriber failed: %s", error)
                self.subscribers.remove(subscriber)
        if self._changed is not None:
            self._changed.set()
        return event

    def since(self, index: int) -> list[dict]:
        return self.events[max(0, index):]

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    async def wait_for(self, predicate: Callable[[dict], bool], since: int = 0,
                       timeout: float = 5.0) -> dict:
        """The first event at or after `since` that satisfies `predicate`; TimeoutError after
        `timeout` seconds, saying which events did arrive."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for event in self.events[since:]:
                if predicate(event):
                    return event
            since = max(since, len(self.events))
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                names = [e["event"] for e in self.events[-12:]]
                raise TimeoutError(f"no matching event within {timeout} s (latest: {names})")
            changed = self._event()
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def query(self, request: dict) -> dict:
        """The control channel's `events` command: the events from index `since` (default 0);
        with `wait` (an event name or a list of them, and optional `match` fields), first waits
        up to `timeout` s for such an event."""
        since = request.get("since") or 0
        since = int(since, 0) if isinstance(since, str) else int(since)
        matched = None
        if request.get("wait") is not None:
            names = request["wait"] if isinstance(request["wait"], list) else [request["wait"]]
            match = request.get("match") or {}
            matched = await self.wait_for(
                lambda e: e["event"] in names and all(e.get(k) == v for k, v in match.items()),
                since=since, timeout=float(request.get("timeout", 5)))
        return {"events": self.since(since), "next": len(self.events), "matched": matched}

    def named(self, name: str, since: int = 0) -> list[dict]:
        return [e for e in self.events[since:] if e["event"] == name]
