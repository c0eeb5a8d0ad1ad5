"""hitl-nb on a JupyterHub: one responder gateway for every user of the hub.

On a hub where each person has their own single-user server, a consensus among people
or a prompt for a named person cannot be finished inside one person's server: the
orchestrator that authenticates responders (spec S-3) must be the hub. This package is
that orchestrator, as a JupyterHub service. In ``jupyterhub_config.py``::

    from hitl_nb.hub import configure
    configure(c, port=10101, db_url=None)

(``db_url="postgresql://..."`` for a team's scale, with more replicas of the service:
``docs/hub.md``.)

It serves ``{hub}/services/hitl/api/``, the same REST API as a Jupyter server's
``{base_url}hitl/api/`` (:mod:`hitl_nb.gateway`), behind the hub's login: tokens (a
kernel's ``JUPYTERHUB_API_TOKEN``, a person's own) and the browser's OAuth cookie (with
XSRF on POST). The caller is the hub user: ``me`` names them, ``specific:<id>`` is
compared with hub user names, consensus counts distinct hub users. Kernels of the hub
find it from the hub's service list (:func:`hitl_nb.client.find_gateway`), ahead of their
own server's gateway. Push notifications arrive at ``{hub}/services/hitl/push/<id>``
without a hub login, only with the task's secret. Hub administrators (and whoever
registered a task) read the audit trail at ``api/audit``.

:func:`configure` writes the service's entry and the scopes; ``hitl-nb hub-service``
(:mod:`hitl_nb.hub._service`) is the process the hub starts, its settings
(:class:`HubSettings`, the gateway's declared once in :class:`hitl_nb.gateway.GatewaySettings`)
on its command line (:mod:`hitl_nb.hub._options`).
"""

from __future__ import annotations

import argparse

from hitl_nb.hub._configure import SERVICE_NAME, configure, replica_environment, service_scopes
from hitl_nb.hub._options import HubSettings

__all__ = [
    "SERVICE_NAME",
    "HubSettings",
    "configure",
    "register_cli",
    "replica_environment",
    "service_scopes",
]


def _run(args: argparse.Namespace) -> int:
    from hitl_nb.hub._service import main

    return main(args)


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hitl-nb hub-service`` to the command's parser (JupyterHub is imported only
    when the service runs)."""
    from hitl_nb.hub._options import register_cli as register

    register(sub, _run)
