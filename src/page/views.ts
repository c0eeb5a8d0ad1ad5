/**
 * A prompt as the gateway's REST API shows it to one person (`prompt_view` in
 * `hitl_nb/gateway/_views.py`: the question whole, the schema, where it stands, how a
 * consensus' answers stand, never anyone else's answer), read defensively: a member of
 * the wrong type is read as absent. `itemFromView` makes the list's item of it (the
 * feed's `PromptItem`), so both sources draw the same row.
 */
import { PromptItem, PromptState } from '../contract';

export interface IPromptView {
  registration: string;
  agent_url: string;
  task_id: string;
  prompt_id: string;
  prompt: string;
  response_schema: unknown;
  deadline: string | null;
  deadline_passed: boolean;
  /** Seconds to the deadline when the view was read (null: none). */
  seconds_left: number | null;
  allowed_responders: string[];
  policy: { specific: string[]; needed: number };
  state: PromptState;
  may_answer: boolean;
  why_not: string | null;
  answers: number;
  agreeing: number;
  disagreement: boolean;
  /** This person's own counted answer (a consensus), or null. */
  your_answer: unknown;
  /** Who the forwarded answer was given by (state forwarded), or null. */
  forwarded_for: string[] | null;
  /** The two-person rule applies: its registrant cannot answer alone. */
  two_person: boolean;
}

const STATES: ReadonlyArray<PromptState> = [
  'open',
  'forwarding',
  'forwarded',
  'expired',
  'closed'
];

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function names(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string')
    : [];
}

/** One view of the API's JSON (null when it is not one). */
export function readView(value: unknown): IPromptView | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return null;
  }
  const v = value as Record<string, unknown>;
  if (typeof v.registration !== 'string' || typeof v.prompt_id !== 'string') {
    return null;
  }
  const policy =
    typeof v.policy === 'object' && v.policy !== null
      ? (v.policy as Record<string, unknown>)
      : {};
  const state = STATES.find(s => s === v.state) ?? 'open';
  const left = v.seconds_left;
  return {
    registration: v.registration,
    agent_url: str(v.agent_url),
    task_id: str(v.task_id),
    prompt_id: v.prompt_id,
    prompt: str(v.prompt),
    response_schema: v.response_schema,
    deadline: typeof v.deadline === 'string' ? v.deadline : null,
    deadline_passed: v.deadline_passed === true,
    seconds_left:
      typeof left === 'number' && Number.isFinite(left) ? left : null,
    allowed_responders: names(v.allowed_responders),
    policy: {
      specific: names(policy.specific),
      needed: Math.max(1, Math.floor(num(policy.needed, 1)))
    },
    state,
    may_answer: v.may_answer === true,
    why_not: typeof v.why_not === 'string' ? v.why_not : null,
    answers: num(v.answers, 0),
    agreeing: num(v.agreeing, 0),
    disagreement: v.disagreement === true,
    your_answer: v.your_answer ?? null,
    forwarded_for: Array.isArray(v.forwarded_for)
      ? names(v.forwarded_for)
      : null,
    two_person: v.two_person === true
  };
}

/** The views of a list's JSON (`{"prompts": [...]}`), the unreadable left out. */
export function readViews(body: Record<string, unknown>): IPromptView[] {
  const listed = Array.isArray(body.prompts) ? body.prompts : [];
  return listed.map(readView).filter((v): v is IPromptView => v !== null);
}

/** The list's item of a view read when the server's clock said `serverNow` (ms). */
export function itemFromView(
  view: IPromptView,
  serverNow: number,
  answered: boolean
): PromptItem {
  return {
    key: `${view.registration}/${view.prompt_id}`,
    registration: view.registration,
    agent_url: view.agent_url,
    task_id: view.task_id,
    prompt_id: view.prompt_id,
    prompt: view.prompt,
    prompt_length: view.prompt.length,
    deadline: view.deadline,
    deadline_at:
      view.seconds_left === null ? null : serverNow / 1000 + view.seconds_left,
    first_seen: 0,
    allowed_responders: view.allowed_responders,
    specific: view.policy.specific,
    needed: view.policy.needed,
    state: view.state,
    may_answer: view.may_answer,
    why_not: view.why_not,
    answers: view.answers,
    agreeing: view.agreeing,
    disagreement: view.disagreement,
    answered,
    registered_by: '',
    two_person: view.two_person
  };
}
