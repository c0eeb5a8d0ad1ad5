/**
 * The answer page's words (`page/words.ts`), the card's: who may answer, a consensus'
 * count, every reply of the gateway to an answer (accepted, forwarding, held, 409 told
 * apart, 410, 422 on the fields, 403, 401, 503), an answer whose reply was lost, and
 * why a prompt takes no answer. The countdown's words are the panel's (`timeLeft`).
 */
import { Clock } from '../page/clock';
import { IPromptView } from '../page/views';
import {
  agreeCount,
  fieldErrors,
  lostOutcome,
  replyOutcome,
  tallyWords,
  viewOutcome,
  whoMayAnswer
} from '../page/words';

const HOST = 'the hub';

function reply(
  status: number,
  body: Record<string, unknown>
): ReturnType<typeof replyOutcome> {
  return replyOutcome({ status, body }, 'bob', 2, HOST);
}

function view(changes: Partial<IPromptView> = {}): IPromptView {
  return {
    registration: 'r1',
    agent_url: 'http://agent.example:8000',
    task_id: 't1',
    prompt_id: 'p1',
    prompt: 'Ship it?',
    response_schema: { type: 'object' },
    deadline: null,
    deadline_passed: false,
    seconds_left: null,
    allowed_responders: ['any'],
    policy: { specific: [], needed: 1 },
    state: 'open',
    may_answer: true,
    why_not: null,
    answers: 0,
    agreeing: 0,
    disagreement: false,
    your_answer: null,
    forwarded_for: null,
    two_person: false,
    ...changes
  };
}

describe('whoMayAnswer and agreeCount', () => {
  it.each([
    [[], 1, 'anyone'],
    [['bob'], 1, 'bob'],
    [['bob', 'carol'], 1, 'bob or carol'],
    [['alice', 'bob', 'carol'], 1, 'alice, bob or carol'],
    [[], 2, '2 people must agree'],
    [['bob', 'carol'], 2, 'bob or carol; 2 people must agree']
  ])('%j, consensus %i: "%s"', (specific, needed, words) => {
    expect(whoMayAnswer({ specific, needed })).toBe(words);
  });

  it('counts a consensus: "1 of 2 agree"', () => {
    expect(agreeCount({ agreeing: 1, needed: 2 })).toBe('1 of 2 agree');
    expect(agreeCount({ agreeing: 0, needed: 1 })).toBe('');
  });

  it('counts as the card does (tally_words)', () => {
    expect(
      tallyWords({ answers: 2, agreeing: 1, needed: 2, disagreement: true })
    ).toBe(
      '2 answers collected, 1 of 2 agreeing; 1 more needed. The answers given so far ' +
        'differ: nothing goes to the agent until 2 people send the same answer'
    );
    expect(
      tallyWords({ answers: 2, agreeing: 2, needed: 2, disagreement: false })
    ).toBe('2 answers collected, 2 of 2 agreeing: enough');
  });
});

describe('replyOutcome', () => {
  it('says accepted only when the agent took it', () => {
    expect(
      reply(200, { status: 'forwarded', responders: ['bob'] })
    ).toMatchObject({
      status: 'accepted',
      message: 'the agent accepted the answer',
      openAgain: false
    });
    expect(
      reply(200, { status: 'forwarded', responders: ['alice', 'bob'] }).message
    ).toBe('the agent accepted the answer (agreed by alice, bob)');
    expect(
      reply(202, { status: 'forwarding', responders: ['bob'] }).message
    ).toBe(
      'the hub took the answer and makes sure it reaches the agent once; the agent has ' +
        'not confirmed it yet'
    );
  });

  it('counts a consensus answer: "your answer is counted: 1 of 2 agree"', () => {
    const held = reply(202, {
      status: 'collecting',
      agreeing: 1,
      needed: 2,
      answers: 1,
      disagreement: false
    });
    expect(held.status).toBe('held');
    expect(held.message).toBe(
      'the hub counted this answer from bob; it goes to the agent once 2 people send the same answer'
    );
    expect(held.details[0]).toBe('Your answer is counted: 1 of 2 agree.');
  });

  it('tells a 409 answered elsewhere from a prompt closed', () => {
    const answered = reply(409, {
      message: 'this prompt was already answered through the hub',
      state: 'forwarded'
    });
    expect(answered.status).toBe('conflict');
    expect(answered.message).toBe(
      'this prompt was answered already (this prompt was already answered through the hub); yours was not sent'
    );
    expect(
      reply(409, {
        status: 'closed',
        message: 'the agent had already closed it'
      }).status
    ).toBe('conflict');
    const closed = reply(409, {
      message: 'this prompt is closed (the agent no longer asks it)'
    });
    expect(closed.status).toBe('closed');
  });

  it('says a deadline passed (410), never "answered already"', () => {
    const expired = reply(410, {
      message:
        "the prompt's deadline (2026-01-01T00:00:00Z) has passed; nothing was sent"
    });
    expect(expired).toMatchObject({ status: 'expired', openAgain: false });
    expect(expired.message).toContain('has passed');
  });

  it('puts a 422 on the fields and keeps the form open', () => {
    const invalid = reply(422, {
      message: "the answer does not fit the prompt's form; nothing was sent",
      validation_errors: [
        {
          path: '/owner/email',
          keyword: 'format',
          message: 'is not an email address'
        },
        {
          path: '',
          keyword: 'required',
          message: "'approve' is a required property"
        },
        'odd'
      ]
    });
    expect(invalid.status).toBe('invalid');
    expect(invalid.openAgain).toBe(true);
    expect(invalid.errors).toEqual([
      { pointer: '/owner/email', message: 'is not an email address' },
      { pointer: '', message: "'approve' is a required property" },
      { pointer: '', message: 'odd' }
    ]);
    expect(
      reply(422, {
        status: 'rejected',
        validation_errors: [{ path: '/a', message: 'no' }]
      }).message
    ).toBe('the agent refused the answer (1 problem); nothing was forwarded');
  });

  it('says why not (403), a login that ended (401), a database away (503)', () => {
    expect(
      reply(403, { message: 'only carol may answer this prompt' }).message
    ).toBe(
      'the hub refused: only carol may answer this prompt; nothing was sent to the agent'
    );
    expect(reply(401, {}).message).toContain('not logged in');
    expect(
      reply(503, { message: 'the gateway cannot answer now' })
    ).toMatchObject({
      status: 'failed',
      openAgain: true
    });
    expect(
      reply(502, { message: 'the agent refused the answer: boom' }).message
    ).toBe(
      "the hub's gateway answered 502: the agent refused the answer: boom"
    );
  });

  it('never says nothing was sent when the reply was lost', () => {
    const lost = lostOutcome(HOST);
    expect(lost.message).not.toContain('nothing was sent');
    expect(lost.message).toContain('not known');
  });

  it('ignores a path that is not a JSON Pointer', () => {
    expect(
      fieldErrors({ validation_errors: [{ path: 'owner', message: 'x' }] })
    ).toEqual([{ pointer: '', message: 'x' }]);
  });
});

describe('viewOutcome', () => {
  it('is null for a prompt this person may answer now', () => {
    expect(viewOutcome(view(), 'bob', HOST)).toBeNull();
  });

  it('says why not, with the gateway reason', () => {
    expect(
      viewOutcome(
        view({ may_answer: false, why_not: 'only carol may answer' }),
        'bob',
        HOST
      )
    ).toMatchObject({
      status: 'refused',
      message: 'only carol may answer; you cannot answer it here'
    });
  });

  it('tells whose answer the agent took', () => {
    const mine = view({ state: 'forwarded', forwarded_for: ['alice', 'bob'] });
    expect(viewOutcome(mine, 'bob', HOST)?.message).toBe(
      'the agent accepted the answer (2 people agreed: alice, bob)'
    );
    expect(viewOutcome(mine, 'carol', HOST)).toMatchObject({
      status: 'conflict',
      message:
        'alice, bob answered this prompt through the hub first; the agent moved on'
    });
  });

  it('says a consensus answer is counted', () => {
    const held = viewOutcome(
      view({
        policy: { specific: [], needed: 2 },
        your_answer: { ok: true },
        answers: 1,
        agreeing: 1
      }),
      'bob',
      HOST
    );
    expect(held?.status).toBe('held');
    expect(held?.details[0]).toBe('Your answer is counted: 1 of 2 agree.');
  });

  it('says expired and closed apart', () => {
    expect(viewOutcome(view({ state: 'expired' }), 'bob', HOST)?.status).toBe(
      'expired'
    );
    expect(
      viewOutcome(view({ deadline_passed: true }), 'bob', HOST)?.status
    ).toBe('expired');
    expect(viewOutcome(view({ state: 'closed' }), 'bob', HOST)?.status).toBe(
      'closed'
    );
  });
});

describe('Clock', () => {
  it('counts down in the panel words, by the server clock', () => {
    const clock = new Clock();
    clock.offset = 60_000; // the server is a minute ahead
    const now = Date.now();
    const node = clock.countdown((now + 60_000 + 252_000) / 1000);
    expect(node.textContent).toBe('4 min 12 s left');
    expect(clock.countdown(null).textContent).toBe('no deadline');
  });
});
