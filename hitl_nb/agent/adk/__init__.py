"""An ADK (Google Agent Development Kit) agent served as an A2A agent whose tool
confirmations ask people (``pip install hitl-nb[adk]``).

Each tool confirmation is a hitl-prompt/v1 prompt: a ``FunctionTool(func,
require_confirmation=True)`` (or a callable deciding per call) asks yes or no; a tool
calling ``tool_context.request_confirmation(hint=..., payload=...)`` asks ``confirmed``
and the payload's fields, the payload's schema being the Pydantic model or JSON Schema
given for the tool in ``payload_schemas``, else one derived from the payload's shape,
the payload itself as the form's default. The tool's name and arguments are shown as the
question's context, as text. The answer, checked before the agent sees it (409 / 422),
resumes the run with ADK's own ``ToolConfirmation`` (``confirmed``, ``payload``) as the
function response to ADK's ``adk_request_confirmation`` call::

    from hitl_nb.agent.adk import serve_agent

    agent = LlmAgent(name="deployer", model=..., tools=[
        FunctionTool(deploy, require_confirmation=True),
    ])
    served = serve_agent(agent, name="Deployer")          # served.url, served.stop()

For prompts that outlive a restart, the SDK's database task store keeps the task and
ADK's own session service the run (one session per task, what it waits on read back from
its events): ``serve_agent(agent, task_store=...,
session_service=DatabaseSessionService("sqlite+aiosqlite:///sessions.sqlite"))``.
:class:`ConfirmationExecutor` is the executor itself, for an a2a-sdk server of your own.

Why not ADK's own A2A server (``google.adk.a2a``, ``to_a2a``): its executor shows a
confirmation as ADK's function-call data parts (every waiting call in one status) and
takes the answer back only as a function-response data part marked with ADK's own part
metadata. hitl-prompt/v1 on top of it would mean rewriting its events on the way out and
the person's answer into ADK's internal part vocabulary on the way in, with the 409 / 422
checks needing the prompt as emitted, which its executor does not keep. Served by
``hitl_nb.agent``, the extension's middleware, prompt book and task store do that work as
they do for the other bridges, and the runner is driven through ADK's public API.
"""

import typing

from ... import _lazy

# The public table (see hitl_nb._lazy): each name loads its module on first use, so the SDK
# and ADK load with the first name used, not with the package.
if typing.TYPE_CHECKING:
    from ._confirmations import CONFIRM_SCHEMA as CONFIRM_SCHEMA
    from ._confirmations import shape_schema as shape_schema
    from ._executor import ConfirmationExecutor as ConfirmationExecutor
    from ._executor import default_result as default_result
    from ._serve import serve_agent as serve_agent

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
