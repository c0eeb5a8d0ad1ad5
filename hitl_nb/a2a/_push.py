"""Push-notification configurations (A2A 1.0 §4.3, §3.1.7-3.1.10) in both wire versions.

The neutral :class:`PushConfig` is one webhook of one task: where the agent POSTs its
updates (``url``), the opaque ``token`` it sends back with each of them, and optional
``authentication`` (an HTTP scheme and credentials for the ``Authorization`` header).

- A2A 1.0 spells it flat, as ``TaskPushNotificationConfig``:
  ``{"id", "taskId", "url", "token", "authentication": {"scheme", "credentials"}}``;
  the same object (without ``taskId``) rides in ``SendMessageConfiguration
  .taskPushNotificationConfig``.
- A2A 0.3 wraps it: ``{"taskId", "pushNotificationConfig": {"id", "url", "token",
  "authentication": {"schemes": [...], "credentials"}}}``; the inner object alone
  rides in ``MessageSendConfiguration.pushNotificationConfig``.

Unknown members (``tenant``, ``metadata``) are ignored, as everywhere in the codecs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._transports import A2AVersion
from hitl_nb.errors import WireDecodeError

__all__ = ["PushConfig", "decode_push_config", "decode_send_push_config", "encode_push_config"]


@dataclass
class PushConfig:
    """One webhook of one task: ``url``, ``token``, optional HTTP authentication.

    ``auth_scheme`` is an HTTP authentication scheme (``"Bearer"``), ``auth_credentials``
    what follows it in the ``Authorization`` header. ``id`` is given by the client or,
    when absent, by the agent; ``task_id`` names the task.
    """

    url: str
    id: str | None = None
    task_id: str | None = None
    token: str | None = None
    auth_scheme: str | None = None
    auth_credentials: str | None = None

    def authorization(self) -> str | None:
        """The ``Authorization`` header value the agent sends, or None."""
        if self.auth_scheme and self.auth_credentials:
            return f"{self.auth_scheme} {self.auth_credentials}"
        return None


def encode_push_config(config: PushConfig, version: A2AVersion) -> dict[str, Any]:
    """The configuration as ``version`` spells a TaskPushNotificationConfig."""
    inner: dict[str, Any] = {}
    w.put(inner, "id", config.id)
    if version == "0.3":
        inner["url"] = config.url
        w.put(inner, "token", config.token)
        if config.auth_scheme:
            auth: dict[str, Any] = {"schemes": [config.auth_scheme]}
            w.put(auth, "credentials", config.auth_credentials)
            inner["authentication"] = auth
        out: dict[str, Any] = {}
        w.put(out, "taskId", config.task_id)
        out["pushNotificationConfig"] = inner
        return out
    w.put(inner, "taskId", config.task_id)
    inner["url"] = config.url
    w.put(inner, "token", config.token)
    if config.auth_scheme:
        auth = {"scheme": config.auth_scheme}
        w.put(auth, "credentials", config.auth_credentials)
        inner["authentication"] = auth
    return inner


def _inner(o: dict[str, Any], pointer: str, version: A2AVersion) -> PushConfig:
    url = w.req_str(o, "url", pointer)
    if not url:
        raise WireDecodeError(w.child(pointer, "url"), "expected a non-empty URL")
    config = PushConfig(url, id=w.opt_str(o, "id", pointer), token=w.opt_str(o, "token", pointer))
    auth = w.opt_obj(o, "authentication", pointer)
    if auth is not None:
        here = w.child(pointer, "authentication")
        if version == "0.3":
            schemes = w.opt_list(auth, "schemes", here, w.string)
            config.auth_scheme = schemes[0] if schemes else None
        else:
            config.auth_scheme = w.req_str(auth, "scheme", here)
        config.auth_credentials = w.opt_str(auth, "credentials", here)
    return config


def decode_push_config(value: Any, version: A2AVersion, pointer: str = "") -> PushConfig:
    """A TaskPushNotificationConfig of ``version`` (WireDecodeError naming the member)."""
    o = w.obj(value, pointer)
    if version == "0.3":
        inner = w.obj(
            w.req(o, "pushNotificationConfig", pointer), w.child(pointer, "pushNotificationConfig")
        )
        config = _inner(inner, w.child(pointer, "pushNotificationConfig"), version)
    else:
        config = _inner(o, pointer, version)
    # Protobuf JSON parsers take the proto field name too (the A2A TCK sends task_id).
    key = "task_id" if "taskId" not in o and "task_id" in o and version == "1.0" else "taskId"
    config.task_id = w.opt_str(o, key, pointer)
    return config


def decode_send_push_config(value: Any, version: A2AVersion, pointer: str = "") -> PushConfig:
    """The push configuration inside a send request's ``configuration`` member."""
    return _inner(w.obj(value, pointer), pointer, version)
