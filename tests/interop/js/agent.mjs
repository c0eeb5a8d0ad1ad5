// An agent written with the official A2A JavaScript SDK's server (@a2a-js/sdk 1.3, the
// way its samples do: an AgentExecutor behind DefaultRequestHandler, the express
// handlers for the card, JSON-RPC and HTTP+JSON), speaking hitl-prompt/v1.
//
//   node agent.mjs            prints "listening on http://127.0.0.1:<port>", serves
//                             until stdin closes or SIGTERM
//
// - The executor opens every turn with the Task (the stored one on a follow-up, still
//   INPUT_REQUIRED on the prompt being answered), as the SDK requires.
// - The envelope is attached only when the request activated the extension, and the
//   activation is echoed (ServerCallContext.addActivatedExtension).
// - Answers are checked in an express middleware BEFORE the SDK runs the executor (an
//   executor that throws fails the task): unknown or answered prompt -> 409 / -32010,
//   invalid payload -> 422 / -32011. On HTTP+JSON the only ErrorInfo reasons the SDK
//   knows are its core ones, so the 422 carries INVALID_PARAMS with validation_errors
//   as JSON text in the ErrorInfo metadata (map<string,string>); on JSON-RPC the 1.0
//   data array holds that ErrorInfo.
// - Its metadata goes through the SDK's protobuf Struct handling, like any SDK agent.
import { randomUUID } from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, TaskState, Role } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from '@a2a-js/sdk/server/express';

const URI = 'https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1';
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['approve'],
  properties: {
    approve: { type: 'boolean', title: 'Approve' },
    comment: { type: 'string', maxLength: 1024, title: 'Comment' },
  },
};
const open = new Map(); // prompt_id -> taskId (still waiting)

function issues(payload) {
  // The checks SCHEMA asks for; an agent in production would use a validator.
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return [{ path: '', keyword: 'type', message: 'expected object' }];
  }
  const out = [];
  if (!('approve' in payload)) {
    out.push({ path: '', keyword: 'required', message: "'approve' is a required property" });
  } else if (typeof payload.approve !== 'boolean') {
    out.push({ path: '/approve', keyword: 'type', message: `expected boolean, got ${typeof payload.approve}` });
  }
  if ('comment' in payload) {
    if (typeof payload.comment !== 'string') {
      out.push({ path: '/comment', keyword: 'type', message: 'expected string' });
    } else if (payload.comment.length > 1024) {
      out.push({ path: '/comment', keyword: 'maxLength', message: 'at most 1024 characters' });
    }
  }
  for (const key of Object.keys(payload)) {
    if (!(key in SCHEMA.properties)) {
      out.push({ path: `/${key}`, keyword: 'additionalProperties', message: `'${key}' is not allowed` });
    }
  }
  return out;
}

const now = () => new Date().toISOString();
const agentText = (taskId, contextId, value, metadata = {}) => ({
  messageId: randomUUID(),
  role: Role.ROLE_AGENT,
  parts: [{ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  taskId,
  contextId,
  extensions: [],
  metadata,
  referenceTaskIds: [],
});

class HitlExecutor {
  cancelTask = async (taskId, eventBus) => {
    eventBus.publish(AgentEvent.statusUpdate({
      taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, timestamp: now() }, metadata: {},
    }));
  };

  async execute(requestContext, eventBus) {
    const { taskId, contextId, task: existing, userMessage } = requestContext;
    const call = requestContext.context;
    const activated = (call.requestedExtensions ?? []).includes(URI);
    if (activated) call.addActivatedExtension(URI);
    // 1. Every turn begins with the Task: the stored one on a follow-up.
    eventBus.publish(AgentEvent.task(existing ?? {
      id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now() },
      artifacts: [], history: [userMessage], metadata: {},
    }));
    const reply = userMessage.metadata?.hitl_response_for;
    if (!reply) {
      // 2a. Ask: the envelope only when the extension was activated (§Activation).
      const promptId = randomUUID();
      const metadata = activated
        ? { [URI]: { prompt_id: promptId, prompt: 'Approve the release?', response_schema: SCHEMA } }
        : {};
      if (activated) open.set(promptId, taskId);
      eventBus.publish(AgentEvent.statusUpdate({
        taskId, contextId, metadata: {},
        status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, timestamp: now(),
          message: agentText(taskId, contextId, 'Approve the release?', metadata) },
      }));
    } else {
      // 2b. The answer was checked before this ran: resume, then finish.
      eventBus.publish(AgentEvent.statusUpdate({
        taskId, contextId, metadata: {}, status: { state: TaskState.TASK_STATE_WORKING, timestamp: now() },
      }));
      const verdict = reply.payload?.approve ? 'approved' : 'rejected';
      eventBus.publish(AgentEvent.statusUpdate({
        taskId, contextId, metadata: {},
        status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: now(),
          message: agentText(taskId, contextId, verdict) },
      }));
    }
    eventBus.finished();
  }
}

function rejection(kind, rpc, id, promptId, found) {
  const conflict = kind === 'conflict';
  const message = conflict ? 'hitl_already_answered_or_unknown' : 'hitl_response_invalid';
  const metadata = { promptId: String(promptId) };
  if (!conflict) metadata.validation_errors = JSON.stringify(found);
  const info = {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'INVALID_PARAMS', // the only kind of reason an SDK agent has for these
    domain: 'a2a-protocol.org',
    metadata,
  };
  if (rpc) {
    const code = conflict ? -32010 : -32011;
    return [200, { jsonrpc: '2.0', id, error: { code, message, data: [info] } }];
  }
  const status = conflict ? 409 : 422;
  return [status, { error: { code: status, status: conflict ? 'ABORTED' : 'INVALID_ARGUMENT', message, details: [info] } }];
}

function checkAnswers(req, res, next) {
  if (req.method !== 'POST' || !req.body || typeof req.body !== 'object') return next();
  const rpc = 'jsonrpc' in req.body;
  const msg = rpc ? req.body.params?.message : req.body.message;
  const reply = msg?.metadata?.hitl_response_for;
  if (!reply) return next();
  const taskId = open.get(reply.prompt_id);
  let refusal = null;
  if (taskId === undefined || taskId !== msg.taskId) {
    refusal = rejection('conflict', rpc, req.body.id, reply.prompt_id, []);
  } else {
    const found = issues(reply.payload);
    if (found.length) refusal = rejection('invalid', rpc, req.body.id, reply.prompt_id, found);
    else open.delete(reply.prompt_id); // accepted exactly once
  }
  if (!refusal) return next();
  const [status, body] = refusal;
  res.status(status).type('application/json').send(JSON.stringify(body));
}

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: 'js sdk hitl agent',
    description: 'An @a2a-js/sdk agent that asks with hitl-prompt/v1',
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    version: '1.0.0',
    capabilities: {
      streaming: true, pushNotifications: false, extendedAgentCard: false,
      extensions: [{ uri: URI, description: 'Structured HITL prompt envelope on INPUT_REQUIRED state.', required: false, params: {} }],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: 'release', name: 'Release approval', description: 'Asks whether to release.',
      tags: ['hitl-prompt'], examples: ['release'], inputModes: ['text'], outputModes: ['text'], securityRequirements: [] }],
    documentationUrl: '',
    signatures: [],
  };
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new HitlExecutor());
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(express.json({ limit: '1mb' }));
  app.use(checkAnswers);
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/a2a/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`listening on ${base}\n`);
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop); // the test's pipe closes: stop with it
process.stdin.resume();
