"""The hub's end-to-end tests once more with the service's state on PostgreSQL
(``configure(c, db_url="postgresql://...")``): a consensus across three people's own
servers, a prompt for someone else refused, and the service killed with -9 between two
answers, restarted by the hub, the held answer still counted (now read back from
PostgreSQL). The tests are ``test_end_to_end.py``'s own, on a hub of this module's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers import postgres
from tests.helpers.hub import HUB_ADMIN, USERS, Hub
from tests.helpers.hub_replicas import running_hub_with
from tests.helpers.tasks import start_task
from tests.hub.test_end_to_end import (
    agent,
    kernels,
    test_a_consensus_among_three_people_on_their_own_servers_forwards_one_answer,
    test_bob_cannot_answer_a_prompt_for_carol_and_nothing_reaches_the_agent,
    test_the_service_killed_between_two_answers_is_restarted_and_the_held_answer_counts,
)

__all__ = [
    "agent",
    "kernels",
    "test_a_consensus_among_three_people_on_their_own_servers_forwards_one_answer",
    "test_bob_cannot_answer_a_prompt_for_carol_and_nothing_reaches_the_agent",
    "test_the_service_killed_between_two_answers_is_restarted_and_the_held_answer_counts",
]

pytestmark = [pytest.mark.slow, pytest.mark.kernel]


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[Hub]:
    """This module's hub: the hitl service on a PostgreSQL database of its own."""
    with running_hub_with(tmp_path_factory.mktemp("hub-pg"), {"db_url": pg_url}) as running:
        for name in (*USERS, HUB_ADMIN):
            running.user_token(name)
        yield running


def test_the_service_keeps_its_state_in_postgresql_not_in_a_file(
    hub: Hub, agent: MockAgent, pg_cluster: postgres.Cluster, pg_url: str
) -> None:
    task = asyncio.run(start_task(agent.url, "approval"))
    r = httpx.post(
        hub.service + "api/tasks",
        json={"agent_url": agent.url, "task_id": task.id},
        headers={"Authorization": f"token {hub.user_token('alice')}"},
        timeout=60,
    )
    assert r.status_code == 201, r.text
    database = pg_url.rsplit("/", 1)[1]
    found = pg_cluster.psql(
        f"SELECT registrant FROM registrations WHERE id = '{r.json()['id']}'", database
    )
    assert found == "alice"
    assert not list((hub.root / "hitl-state").glob("gateway.sqlite*"))
