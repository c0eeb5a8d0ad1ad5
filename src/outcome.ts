/**
 * What became of an answer, in the words the notebook's card uses
 * (`hitl_nb/notebook/_outcomes.py`: `gateway_verdict`, `held_message`, `_gateway_refusal`;
 * `hitl_nb/_words.py`: `tally_words`). Plain text, drawn with `textContent`.
 */

/** How a reply ends: the agent has it, a consensus holds it, or it was not taken. */
export type AnswerStatus =
  | 'accepted'
  | 'held'
  | 'refused'
  | 'invalid'
  | 'conflict'
  | 'expired'
  | 'closed'
  | 'failed';

export interface IOutcome {
  status: AnswerStatus;
  message: string;
  /** A consensus' count in words ("" when one answer settles the prompt). */
  tally: string;
  /** The form stays open for another try. */
  again: boolean;
  /** The fields' problems (the agent's or the gateway's 422). */
  validationErrors: Array<{ path: string; message: string }>;
}

export const ACCEPTED = 'the agent accepted the answer';
export const NOTHING_SENT = 'nothing was sent to the agent';
/** Who relays the answer: the server's own gateway, or the hub's service. */
export const SERVER = 'the Jupyter server';
export const HUB = 'the hub';

/** A consensus' count: "2 answers collected, 1 of 2 agreeing; 1 more needed". */
export function tallyWords(
  answers: number,
  agreeing: number,
  needed: number,
  disagreement: boolean
): string {
  if (needed <= 1) {
    return '';
  }
  const more = Math.max(0, needed - agreeing);
  const collected = `${answers} answer${answers !== 1 ? 's' : ''} collected`;
  const agree = `${agreeing} of ${needed} agreeing`;
  if (!more) {
    return `${collected}, ${agree}: enough`;
  }
  let words = `${collected}, ${agree}; ${more} more needed`;
  if (disagreement) {
    words +=
      '. The answers given so far differ: nothing goes to the agent until ' +
      `${needed} people send the same answer`;
  }
  return words;
}

type Body = { [key: string]: unknown };

function text(body: Body, key: string): string {
  const value = body[key];
  return typeof value === 'string' ? value : '';
}

function count(body: Body, key: string, otherwise: number): number {
  const value = body[key];
  return typeof value === 'number' ? value : otherwise;
}

/** The outcome of the gateway's reply (`status`, `body`) to an answer given as `name`,
 * relayed by `host`; `needed`: how many must agree when the reply does not say. */
export function outcomeOf(
  status: number,
  body: unknown,
  name: string,
  needed: number,
  host: string
): IOutcome {
  const b: Body = body && typeof body === 'object' ? (body as Body) : {};
  const said = text(b, 'message');
  const out = (
    s: AnswerStatus,
    message: string,
    again: boolean,
    extra: Partial<IOutcome> = {}
  ): IOutcome => ({
    status: s,
    message,
    tally: '',
    again,
    validationErrors: [],
    ...extra
  });
  if (status === 200 || status === 202) {
    const kind = text(b, 'status');
    if (kind === 'collecting') {
      const n = count(b, 'needed', needed);
      return out(
        'held',
        `${host} counted this answer from ${name}; it goes to the agent once ${n} people send the same answer`,
        true,
        {
          tally: tallyWords(
            count(b, 'answers', 1),
            count(b, 'agreeing', 1),
            n,
            b.disagreement === true
          )
        }
      );
    }
    const responders = Array.isArray(b.responders)
      ? b.responders.map(String)
      : [];
    const note =
      responders.length > 1 ? ` (agreed by ${responders.join(', ')})` : '';
    if (kind === 'forwarding') {
      return out(
        'accepted',
        `${host} took the answer and makes sure it reaches the agent once${note}; the agent has not confirmed it yet`,
        false
      );
    }
    return out('accepted', `${ACCEPTED}${note}`, false);
  }
  if (status === 422) {
    const raw = Array.isArray(b.validation_errors) ? b.validation_errors : [];
    const errors = raw.map(e => {
      const entry: Body = e && typeof e === 'object' ? (e as Body) : {};
      return {
        path: typeof entry.path === 'string' ? entry.path : '',
        message: typeof entry.message === 'string' ? entry.message : String(e)
      };
    });
    const what = errors.length
      ? `${errors.length} problem${errors.length !== 1 ? 's' : ''}`
      : 'it did not say why';
    const own = said && !/validation/i.test(said) ? `; it says: ${said}` : '';
    return out(
      'invalid',
      `the agent refused the answer (${what})${own}`,
      true,
      {
        validationErrors: errors
      }
    );
  }
  if (status === 409) {
    if (/closed/i.test(said) && !/answered/i.test(said)) {
      return out(
        'closed',
        `the task moved on before this prompt was answered (${said}); yours was not sent`,
        false
      );
    }
    return out(
      'conflict',
      `this prompt was answered already (${said}); yours was not sent`,
      false
    );
  }
  if (status === 410) {
    return out(
      'expired',
      said || "the prompt's deadline has passed; nothing was sent",
      false
    );
  }
  if (status === 403) {
    return out('refused', `${host} refused: ${said}; ${NOTHING_SENT}`, true);
  }
  return out(
    'failed',
    `${host}'s gateway answered ${status}: ${said || 'no reason given'}`,
    true
  );
}
