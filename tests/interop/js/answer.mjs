// The official A2A JavaScript SDK's client answering any hitl-prompt/v1 agent.
//
//   node answer.mjs <agent base URL> <JSONRPC | HTTP+JSON> <first text> <valid JSON> <invalid JSON>
//
// Runs, on the chosen binding: a blocking send to a prompt, the invalid answer (422 /
// -32011), the valid one, the same again (409 / -32010), a streamed turn to a prompt and
// a streamed answer, and a resubscription to a waiting task that sees an answer land.
// Prints one JSON object describing what the SDK handed to its caller at each step; the
// Python test asserts on it. Nothing here checks anything itself.
import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client';

const URI = 'https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1';
const [url, binding, firstText, validJson, invalidJson] = process.argv.slice(2);
const valid = JSON.parse(validJson);
const invalid = JSON.parse(invalidJson);
const ROLE_USER = 1;

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    preferredTransports: [binding],
  }),
);
const client = await factory.createFromUrl(url);
const options = {
  serviceParameters: ServiceParameters.createFrom(undefined, withA2AExtensions(URI)),
};

const text = (value) => ({ content: { $case: 'text', value } });
const message = (value, extra = {}) => ({
  messageId: randomUUID(),
  role: ROLE_USER,
  parts: [text(value)],
  ...extra,
});
const envelopeOf = (task) => task?.status?.message?.metadata?.[URI];
const answer = (task, promptId, payload) =>
  message('answer', {
    taskId: task.id,
    contextId: task.contextId,
    metadata: { hitl_response_for: { prompt_id: promptId, payload } },
  });
const kind = (event) => {
  const { $case, value } = event.payload;
  return value.status ? `${$case}:${value.status.state}` : $case;
};

function describeError(error) {
  const out = { name: error?.name, message: error?.message };
  for (const key of ['envelopeCode', 'statusCode', 'reason']) {
    if (error?.[key] !== undefined) out[key] = error[key];
  }
  const data = error?.data ?? error?.metadata;
  const found = [];
  for (const detail of Array.isArray(data) ? data : data ? [data] : []) {
    if (Array.isArray(detail?.validation_errors)) found.push(...detail.validation_errors);
  }
  out.validationErrors = found;
  return out;
}

async function refused(call) {
  try {
    await call();
    return { accepted: true };
  } catch (error) {
    return describeError(error);
  }
}

const report = { binding: client.transport.protocolName };

const task = await client.sendMessage({ message: message(firstText) }, options);
const env = envelopeOf(task);
report.blocking = { state: task.status.state, promptId: env?.prompt_id ?? null,
  prompt: env?.prompt ?? null };
report.invalid = await refused(() =>
  client.sendMessage({ message: answer(task, env.prompt_id, invalid) }, options));
const done = await client.sendMessage(
  { message: answer(task, env.prompt_id, valid), configuration: { returnImmediately: false } },
  options);
report.accepted = { state: done.status.state };
report.conflict = await refused(() =>
  client.sendMessage({ message: answer(task, env.prompt_id, valid) }, options));

const first = [];
for await (const event of client.sendMessageStream({ message: message(firstText) }, options)) {
  first.push(event);
}
const opened = first[0].payload.value;
const asked = first[first.length - 1].payload.value;
report.stream = { kinds: first.map(kind), promptId: envelopeOf(asked)?.prompt_id ?? null };
const streamed = [];
const reply = answer({ id: opened.id, contextId: opened.contextId },
  envelopeOf(asked).prompt_id, valid);
for await (const event of client.sendMessageStream({ message: reply }, options)) {
  streamed.push(event);
}
const openedWith = streamed[0].payload.value;
report.streamedAnswer = {
  kinds: streamed.map(kind),
  answerInHistory: (openedWith.history ?? []).some((m) => m.messageId === reply.messageId),
};

const waiting = await client.sendMessage({ message: message(firstText) }, options);
const sub = client.resubscribeTask({ id: waiting.id }, options);
const firstEvent = await sub.next();
const seen = [kind(firstEvent.value)];
const replayed = envelopeOf(firstEvent.value.payload.value)?.prompt_id ?? null;
await client.sendMessage(
  { message: answer(waiting, envelopeOf(waiting).prompt_id, valid) }, options);
for await (const event of sub) seen.push(kind(event));
report.resubscribe = { kinds: seen, replayed, promptId: envelopeOf(waiting).prompt_id };

const fetched = await client.getTask({ id: waiting.id }, options);
report.getTask = { state: fetched.status.state };

process.stdout.write(JSON.stringify(report) + '\n');
