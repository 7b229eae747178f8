"""A small synchronous client of the gateway's /wt/ admin API, for drivers and tests."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx

from windtunnel._core.reference import ReferenceCase, ReferenceDecision
from windtunnel._gateway.script import INSTALL_SHAPE
from windtunnel._net.json_body import json_object
from windtunnel._net.liveness import Liveness, named_death
from windtunnel._net.tls import shared_tls_context
from windtunnel._scenario.serialize import decisions_to_json
from windtunnel.errors import GatewayError, HarnessError


class GatewayClient:
    """Talks to one gateway at `base_url` (its root, e.g. http://gateway:8000; a trailing /v1 is ignored).

    A refusal from the gateway (bad script, wrong mode) raises GatewayError with `.reason` set to the
    gateway's error code and `.field` to the bad field; an unreachable or broken gateway raises HarnessError,
    which leads with the gateway's death when `liveness` (the container driver's) reports one.
    """

    def __init__(self, base_url: str, *, timeout: float = 10.0, liveness: Liveness | None = None) -> None:
        root = base_url.rstrip("/")
        self.base_url = root.removesuffix("/v1")
        self.liveness = liveness
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, verify=shared_tls_context())

    def install_script(
        self,
        case: str,
        decisions: Sequence[ReferenceDecision] | Sequence[Mapping[str, Any]],
        session: str | None = None,
    ) -> dict[str, Any]:
        """Install `case`'s decisions globally, or for one session; returns the installed script's summary."""
        items: list[Any] = list(decisions)
        payload = decisions_to_json(items) if all(isinstance(d, ReferenceDecision) for d in items) else items
        body = {"case": case, "session": session, "decisions": payload}
        installed: dict[str, Any] = self._call("PUT", "/wt/script", json=body)["installed"]
        return installed

    def clear_script(self, session: str | None = None) -> int:
        """Remove every script, or only `session`'s; returns how many were removed."""
        params = {"session": session} if session is not None else None
        cleared: int = self._call("DELETE", "/wt/script", params=params)["cleared"]
        return cleared

    def scripts(self) -> dict[str, Any]:
        """What is installed: {"global": summary|None, "sessions": {name: summary}} with remaining counts."""
        return self._call("GET", "/wt/script")

    def set_side_models(self, models: Sequence[str]) -> list[str]:
        """Declare the model names whose calls are side traffic (answered beside the script, never from it)."""
        declared: list[str] = self._call("PUT", "/wt/side", json={"models": list(models)})["side_models"]
        return declared

    def log(self, since: int = 0) -> list[dict[str, Any]]:
        """Log entries whose index is >= `since`, oldest first (see windtunnel._gateway.log)."""
        entries: list[dict[str, Any]] = self._call("GET", "/wt/log", params={"since": since})["entries"]
        return entries

    def next_index(self) -> int:
        """The index the next logged request will get: pass it to log(since=...) to read only newer ones."""
        following: int = self._call("GET", "/wt/log", params={"since": 2**62})["next"]
        return following

    def clear_log(self) -> int:
        cleared: int = self._call("DELETE", "/wt/log")["cleared"]
        return cleared

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/wt/health")

    def tape(self) -> dict[str, Any]:
        """Replay mode: what the replay consumed so far; record mode: what was recorded (GET /wt/tape)."""
        return self._call("GET", "/wt/tape")

    def flush_tape(self) -> dict[str, Any]:
        """Record mode: write the tape now; returns {"tape", "path", "interactions", "sha256"}.

        A record run that recorded nothing raises GatewayError with reason "tape_not_recorded".
        """
        return self._call("POST", "/wt/tape/flush")

    def wait_until_healthy(self, timeout: float = 30.0, interval: float = 0.05) -> dict[str, Any]:
        """Poll /wt/health until the gateway answers; HarnessError naming the last failure after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.health()
            except GatewayError:
                raise
            except HarnessError as exc:
                if time.monotonic() >= deadline:
                    raise HarnessError(
                        f"the model gateway at {self.base_url} did not become healthy within {timeout}s: "
                        f"{exc.message}",
                        hint="check the gateway's logs (`wt gateway serve` prints its address when ready)",
                    ) from exc
            time.sleep(interval)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            return self._exchange(method, path, **kwargs)
        except GatewayError:
            raise
        except HarnessError as exc:
            raise named_death(exc, self.liveness) from exc

    def _exchange(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise HarnessError(
                f"the model gateway at {url} is unreachable: {type(exc).__name__}: {exc}",
                hint="start it with `wt gateway serve`, or check the URL and that its container is running",
            ) from exc
        data = _json(response, url)
        if response.status_code >= 500 or (response.status_code >= 400 and "error" not in data):
            raise HarnessError(
                f"the model gateway at {url} failed: HTTP {response.status_code}: {response.text[:300]}",
                hint="this is a Wind Tunnel bug or a wrong URL; check the gateway's logs",
            )
        if response.status_code >= 400:
            error = data["error"]
            raise GatewayError(
                f"the model gateway refused {method} {path}: {error.get('message')}",
                hint=_hint(error.get("code")),
                reason=error.get("code"),
                field=error.get("param"),
                status=response.status_code,
            )
        return data


def _json(response: httpx.Response, url: str) -> dict[str, Any]:
    data = json_object(response)
    if data is None:
        raise HarnessError(
            f"{url} answered HTTP {response.status_code} with something other than a JSON object: "
            f"{response.text[:300]!r}",
            hint="is this URL really a Wind Tunnel model gateway (`wt gateway serve`)?",
        )
    return data


def _hint(code: Any) -> str:
    if code == "not_script_mode":
        return "start the gateway with `wt gateway serve --mode script` to install reference decisions"
    if code == "not_tape_mode":
        return "start the gateway with `wt gateway serve --mode replay --tape PATH` or `--mode record ...`"
    if code == "invalid_script":
        return f"fix the field named in the message; PUT /wt/script takes {INSTALL_SHAPE}"
    return "see the gateway's message above"


class LogCursor:
    """A position in a gateway's log: each read() returns only the entries logged since the last read."""

    def __init__(self, start: int) -> None:
        self.index = start

    def read(self, gateway: GatewayClient) -> list[dict[str, Any]]:
        entries = gateway.log(since=self.index)
        if entries:
            self.index = int(entries[-1]["index"]) + 1
        return entries


_T = TypeVar("_T")


def start_scripted(gateway: GatewayClient, case: ReferenceCase, start: Callable[[], _T]) -> _T:
    """Install `case`'s decisions as the gateway's only script, then `start()` the handle that plays them;
    a start that fails clears the script again (a reference handle's teardown clears it otherwise)."""
    gateway.clear_script()
    gateway.install_script(case.name, case.decisions)
    try:
        return start()
    except BaseException:
        with contextlib.suppress(Exception):
            gateway.clear_script()
        raise
