"""The gateway's own tests (tests/server/test_gateway.py, test_gateway_hostile.py and
test_push.py), run against the hub service: the same requests, the hub's users and the hub's answers
about them (``api`` of this folder's conftest speaks to a service in this process).

Left out: what only a Jupyter server shows (display names from its IdentityProvider,
every task listed to every user, its own hosted agent); the hub's own versions of those
are in ``test_auth.py`` and ``test_end_to_end.py``.
"""

from __future__ import annotations

import pytest

from tests.server.test_gateway import (  # noqa: F401
    test_a_disagreement_is_reported_and_nothing_is_forwarded,
    test_an_invalid_answer_gets_422_and_nothing_reaches_the_agent,
    test_consensus_of_two_forwards_exactly_once,
    test_fifty_racing_consensus_votes_forward_exactly_one_answer,
    test_fifty_racing_submissions_forward_exactly_one_answer,
    test_specific_prompt_refuses_others_and_nothing_reaches_the_agent,
    test_the_gateway_keeps_its_own_deadline_timer,
)
from tests.server.test_gateway_hostile import (  # noqa: F401
    test_agent_urls_that_are_not_plain_http_are_refused,
    test_an_unreachable_agent_is_a_502_not_a_hang,
    test_answers_to_unknown_things_get_404,
    test_malformed_and_oversized_bodies_get_clear_4xx,
    test_redirects_are_not_followed,
    test_the_admin_allow_list_holds_for_urls_and_card_interfaces,
    test_unauthenticated_requests_get_403,
)
from tests.server.test_push import (  # noqa: F401
    test_a_prompt_arrives_by_push,
    test_a_read_that_crosses_a_push_does_not_close_the_new_prompt,
    test_an_agent_without_push_is_watched_as_before,
    test_hostile_pushes_are_refused_and_change_nothing,
    test_unknown_registration_wrong_method_and_a_good_push,
)

# Imported tests keep their own decorators, not their module's pytestmark.
pytestmark = pytest.mark.kernel
