/**
 * Every word the answer page says about a prompt and an answer, in one place, worded as
 * the notebook's card says them (`hitl_nb/notebook/_outcomes.py`, `hitl_nb/_words.py`):
 * the statuses (accepted, held, refused, invalid, conflict, expired, closed, failed), a
 * consensus' count, a 409 told apart from a deadline, the 422's problems. Durations come
 * from `src/words.ts`, as in JupyterLab's panel. Words never say more than is known.
 */
import { PromptItem } from '../contract';
import { messageOf, IReply } from './api';
import { IPromptView } from './views';

/** What became of an answer (or why a prompt takes none), as the page shows it. */
export interface IOutcome {
  status:
    | 'accepted'
    | 'held'
    | 'refused'
    | 'invalid'
    | 'conflict'
    | 'expired'
    | 'closed'
    | 'failed'
    | 'sending';
  /** The status line: what happened, in words. */
  message: string;
  /** More lines under it (a consensus' count, the fields at fault). */
  details: string[];
  /** Does the form take another answer. */
  openAgain: boolean;
  /** The problems to show on the fields (a 422), by JSON Pointer. */
  errors: { pointer: string; message: string }[];
}

export const NOTHING_SENT = 'nothing was sent to the agent';
const ACCEPTED = 'the agent accepted the answer';

function outcome(
  status: IOutcome['status'],
  message: string,
  more: Partial<IOutcome> = {}
): IOutcome {
  return {
    status,
    message,
    details: [],
    openAgain: false,
    errors: [],
    ...more
  };
}

/** "bob", "bob or carol", "alice, bob or carol". */
function either(people: ReadonlyArray<string>): string {
  if (people.length <= 1) {
    return people.join('');
  }
  return `${people.slice(0, -1).join(', ')} or ${people[people.length - 1]}`;
}

/** Who may answer, in words: "anyone", "bob", "2 people must agree". */
export function whoMayAnswer(
  item: Pick<PromptItem, 'specific' | 'needed'>
): string {
  const agree = item.needed > 1 ? `${item.needed} people must agree` : '';
  if (item.specific.length) {
    return agree ? `${either(item.specific)}; ${agree}` : either(item.specific);
  }
  return agree || 'anyone';
}

/** A consensus' count: "1 of 2 agree" ("" for a prompt one answer settles). */
export function agreeCount(
  item: Pick<PromptItem, 'agreeing' | 'needed'>
): string {
  return item.needed > 1 ? `${item.agreeing} of ${item.needed} agree` : '';
}

/** A consensus' answers as the card counts them (`tally_words`), "" for one answer. */
export function tallyWords(count: {
  answers: number;
  agreeing: number;
  needed: number;
  disagreement: boolean;
}): string {
  if (count.needed <= 1) {
    return '';
  }
  const more = Math.max(0, count.needed - count.agreeing);
  const collected = `${count.answers} answer${count.answers !== 1 ? 's' : ''} collected`;
  const agree = `${count.agreeing} of ${count.needed} agreeing`;
  if (!more) {
    return `${collected}, ${agree}: enough`;
  }
  let words = `${collected}, ${agree}; ${more} more needed`;
  if (count.disagreement) {
    words +=
      '. The answers given so far differ: nothing goes to the agent until ' +
      `${count.needed} people send the same answer`;
  }
  return words;
}

/** The 422's `validation_errors` as the form's field errors (odd entries: whole answer). */
export function fieldErrors(
  body: Record<string, unknown>
): { pointer: string; message: string }[] {
  const listed = Array.isArray(body.validation_errors)
    ? (body.validation_errors as unknown[])
    : [];
  return listed.map(entry => {
    if (typeof entry !== 'object' || entry === null) {
      return { pointer: '', message: String(entry) };
    }
    const e = entry as Record<string, unknown>;
    const pointer = typeof e.path === 'string' ? e.path : '';
    const message =
      typeof e.message === 'string' ? e.message : 'this value is not accepted';
    return { pointer: pointer.startsWith('/') ? pointer : '', message };
  });
}

function problems(count: number): string {
  return count
    ? `${count} problem${count !== 1 ? 's' : ''}`
    : 'it did not say why';
}

/**
 * What became of an answer, from the gateway's reply to the POST: the same statuses and
 * words as the card's `gateway_verdict`. `me`: who the server says answered; `needed`:
 * how many must agree when the reply does not say.
 */
export function replyOutcome(
  reply: IReply,
  me: string,
  needed: number,
  host: string
): IOutcome {
  const body = reply.body;
  const said = messageOf(body);
  const status = body.status;
  if (reply.status === 200 || reply.status === 202) {
    if (status === 'collecting') {
      const need = typeof body.needed === 'number' ? body.needed : needed;
      const agreeing = typeof body.agreeing === 'number' ? body.agreeing : 0;
      const answers =
        typeof body.answers === 'number' ? body.answers : agreeing;
      return outcome(
        'held',
        `${host} counted this answer from ${me}; it goes to the agent once ${need} people send the same answer`,
        {
          details: [
            `Your answer is counted: ${agreeing} of ${need} agree.`,
            tallyWords({
              answers,
              agreeing,
              needed: need,
              disagreement: body.disagreement === true
            })
          ]
        }
      );
    }
    const responders = Array.isArray(body.responders)
      ? body.responders.filter((r): r is string => typeof r === 'string')
      : [];
    const note =
      responders.length > 1 ? `agreed by ${responders.join(', ')}` : '';
    const extra = note ? ` (${note})` : '';
    if (status === 'forwarding') {
      return outcome(
        'accepted',
        `${host} took the answer and makes sure it reaches the agent once${extra}; the agent has not confirmed it yet`
      );
    }
    return outcome('accepted', `${ACCEPTED}${extra}`);
  }
  switch (reply.status) {
    case 422: {
      const errors = fieldErrors(body);
      if (status === 'rejected') {
        return outcome(
          'invalid',
          `the agent refused the answer (${problems(errors.length)}); nothing was forwarded`,
          { errors, openAgain: true }
        );
      }
      return outcome(
        'invalid',
        said || "the answer does not fit the prompt's form; nothing was sent",
        { errors, openAgain: true }
      );
    }
    case 409:
      if (
        body.state === 'forwarding' ||
        body.state === 'forwarded' ||
        status === 'closed'
      ) {
        return outcome(
          'conflict',
          `this prompt was answered already (${said || 'by someone else'}); yours was not sent`
        );
      }
      return outcome(
        'closed',
        `${said || 'this prompt is closed'}; yours was not sent`
      );
    case 410:
      return outcome(
        'expired',
        said || `the prompt's deadline has passed; ${NOTHING_SENT}`
      );
    case 403:
      return outcome('refused', `${host} refused: ${said}; ${NOTHING_SENT}`);
    case 401:
      return outcome(
        'failed',
        `you are not logged in to ${host} any more; ${NOTHING_SENT}. Log in again, then answer.`,
        { openAgain: true }
      );
    case 503:
      return outcome(
        'failed',
        said || `${host} cannot answer now; try again in a moment`,
        { openAgain: true }
      );
    default:
      return outcome(
        'failed',
        `${host}'s gateway answered ${reply.status}: ${said || 'no reason given'}`,
        { openAgain: true }
      );
  }
}

/** The answer went out and nothing came back: whether it arrived is not known. */
export function lostOutcome(host: string): IOutcome {
  return outcome(
    'failed',
    `${host} could not be reached, so whether the answer arrived is not known; it ` +
      'forwards an answer at most once: answer again to find out (a second answer is ' +
      'refused if the first one went through)',
    { openAgain: true }
  );
}

/**
 * Why a prompt takes no answer from this person now (null: it does): answered
 * already (by them, or by others), expired, closed, or not theirs to answer.
 */
export function viewOutcome(
  view: IPromptView,
  me: string | null,
  host: string
): IOutcome | null {
  const count = tallyWords({ ...view, needed: view.policy.needed });
  const who = view.forwarded_for ?? [];
  switch (view.state) {
    case 'forwarded':
      if (me !== null && who.includes(me)) {
        const agreed =
          who.length > 1
            ? ` (${who.length} people agreed: ${who.join(', ')})`
            : '';
        return outcome('accepted', `${ACCEPTED}${agreed}`);
      }
      if (me === null) {
        return outcome('accepted', `answered through ${host}: ${ACCEPTED}`);
      }
      return outcome(
        'conflict',
        `${who.join(', ') || 'someone else'} answered this prompt through ${host} first; the agent moved on`
      );
    case 'forwarding':
      return outcome(
        'accepted',
        `an answer is on its way to the agent: ${host} makes sure it reaches the agent once`
      );
    case 'expired':
      return outcome(
        'expired',
        'the deadline passed and the agent no longer takes answers to this prompt'
      );
    case 'closed':
      return outcome(
        'closed',
        'the task moved on without an answer to this prompt; it takes no answers'
      );
    default:
      break;
  }
  if (!view.may_answer) {
    return outcome(
      'refused',
      `${view.why_not || `${host} says you may not answer this prompt`}; you cannot answer it here`
    );
  }
  if (view.deadline_passed) {
    return outcome(
      'expired',
      'the deadline has passed: an answer now would not be sent'
    );
  }
  if (view.your_answer !== null) {
    return outcome(
      'held',
      `you answered already: ${host} counted your answer; it goes to the agent once ${view.policy.needed} people send the same answer`,
      {
        details: [
          `Your answer is counted: ${view.agreeing} of ${view.policy.needed} agree.`,
          count
        ].filter(Boolean)
      }
    );
  }
  return null;
}

/** The label a status line starts with. */
export function statusLabel(status: IOutcome['status']): string {
  return status === 'sending' ? 'sending' : status;
}
