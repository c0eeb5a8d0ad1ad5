"""Push-notification configurations of a task (A2A 1.0 §3.1.7-3.1.10), for HitlClient.

A mixin: :class:`PushMethods` gives :class:`~hitl_nb.client.HitlClient` four methods
that speak whichever binding and version the client chose (JSON-RPC 1.0 or 0.3,
HTTP+JSON) and return the neutral :class:`~hitl_nb.a2a.PushConfig`::

    config = await client.create_push_config(task_id, "https://me.example/hook",
                                             token=secrets.token_urlsafe(32))
    await client.list_push_configs(task_id)
    await client.delete_push_config(task_id, config.id)
    event = await client.read_notification(body)   # on the receiving side

An agent whose card says ``pushNotifications: false`` answers
:class:`~hitl_nb.errors.PushNotificationNotSupported`.
"""

from __future__ import annotations

import abc
from typing import Any

from hitl_nb.a2a import (
    CODEC_V03,
    CODEC_V1,
    PushConfig,
    StreamEvent,
    decode_push_config,
    encode_push_config,
)
from hitl_nb.errors import ProtocolViolation, WireDecodeError

from ._bindings import Binding

__all__ = ["PushMethods"]

#: ListTaskPushNotificationConfigs pages followed at most (a loop guard).
_MAX_PAGES = 100


class PushMethods(abc.ABC):
    """Create, get, list and delete a task's webhooks (a mixin of HitlClient)."""

    @abc.abstractmethod
    async def _ready(self) -> Binding:
        """The connected binding."""

    async def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        token: str | None = None,
        config_id: str | None = None,
        auth_scheme: str | None = None,
        auth_credentials: str | None = None,
    ) -> PushConfig:
        """Ask the agent to POST the task's updates to ``url`` (CreateTaskPushNotificationConfig).

        ``token`` comes back with every notification (``X-A2A-Notification-Token``): make
        it a fresh random secret per configuration and check it on receipt (A2A §13.2).
        ``auth_scheme`` + ``auth_credentials`` become the notifications' ``Authorization``
        header. ``config_id`` names the configuration (the agent makes one up when absent;
        the same id again replaces it). Returns the configuration as the agent stored it.
        """
        binding = await self._ready()
        config = PushConfig(
            url,
            id=config_id,
            task_id=task_id,
            token=token,
            auth_scheme=auth_scheme,
            auth_credentials=auth_credentials,
        )
        body = encode_push_config(config, binding.version)
        result = await binding.push_call("push_create", task_id, None, body)
        return _decode(result, binding, "CreateTaskPushNotificationConfig")

    async def get_push_config(self, task_id: str, config_id: str | None = None) -> PushConfig:
        """One configuration of the task (GetTaskPushNotificationConfig).

        ``config_id`` may be left out on A2A 0.3 only (the task's first configuration).
        """
        binding = await self._ready()
        if binding.version == "0.3":
            body: dict[str, Any] = {"id": task_id}
            if config_id is not None:
                body["pushNotificationConfigId"] = config_id
        else:
            if config_id is None:
                raise ValueError("config_id is required by A2A 1.0's GetTaskPushNotificationConfig")
            body = {"taskId": task_id, "id": config_id}
        result = await binding.push_call("push_get", task_id, config_id, body)
        return _decode(result, binding, "GetTaskPushNotificationConfig")

    async def list_push_configs(self, task_id: str) -> list[PushConfig]:
        """Every configuration of the task (ListTaskPushNotificationConfigs, all pages)."""
        binding = await self._ready()
        what = "ListTaskPushNotificationConfigs"
        if binding.version == "0.3":
            result = await binding.push_call("push_list", task_id, None, {"id": task_id})
            if not isinstance(result, list):
                raise ProtocolViolation(f"{what}: expected an array of configurations")
            return [_decode(item, binding, what) for item in result]
        configs: list[PushConfig] = []
        token: str | None = None
        for _ in range(_MAX_PAGES):
            body: dict[str, Any] = {"taskId": task_id}
            if token:
                body["pageToken"] = token
            page = await binding.push_call("push_list", task_id, None, body)
            items = page.get("configs", []) if isinstance(page, dict) else None
            if not isinstance(items, list):
                raise ProtocolViolation(f"{what}: expected an object with a configs array")
            configs += [_decode(item, binding, what) for item in items]
            token = page.get("nextPageToken") or None
            if not isinstance(token, str):
                return configs
        raise ProtocolViolation(f"{what}: more than {_MAX_PAGES} pages; stopped reading")

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """Remove a configuration (DeleteTaskPushNotificationConfig); no more
        notifications go to it. Deleting one that is gone is no error (§3.1.10)."""
        binding = await self._ready()
        if binding.version == "0.3":
            body = {"id": task_id, "pushNotificationConfigId": config_id}
        else:
            body = {"taskId": task_id, "id": config_id}
        await binding.push_call("push_delete", task_id, config_id, body)

    async def read_notification(self, body: Any) -> StreamEvent:
        """A notification's JSON body as a neutral event (A2A §4.3.3).

        A 1.0 agent POSTs a StreamResponse (``task``, ``statusUpdate``, ...), a 0.3 agent
        the Task itself (with ``kind``); both are read. Prompt envelopes are settled as
        in every other answer (integral numbers, field order). Raises
        :class:`~hitl_nb.errors.ProtocolViolation` naming what does not decode. It
        does not check who sent it: verify the token first.
        """
        binding = await self._ready()
        codec = CODEC_V03 if isinstance(body, dict) and "kind" in body else CODEC_V1
        return binding._decode(codec.decode_stream_response, body, "", "push notification")


def _decode(value: Any, binding: Binding, what: str) -> PushConfig:
    try:
        return decode_push_config(value, binding.version, "/result")
    except WireDecodeError as exc:
        raise ProtocolViolation(f"{what}: the agent's answer does not decode: {exc}") from exc
