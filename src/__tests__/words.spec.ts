/**
 * Every word the extension shows about a prompt (`words.ts`): durations, who may
 * answer and a consensus' count, the agent's name, a cut question, a count of prompts.
 */
import { agentName, cut, prompts, timeLeft, whoMayAnswer } from '../words';
import { item } from './items';

const NOW = 1_800_000_000_000;

describe('timeLeft', () => {
  it.each([
    [45, '45 s left'],
    [60, '1 min left'],
    [252, '4 min 12 s left'],
    [600, '10 min left'],
    [612, '10 min left'],
    [3600, '1 h left'],
    [3 * 3600 + 5 * 60 + 59, '3 h 5 min left'],
    [86400, '1 day left'],
    [2 * 86400 + 3600, '2 days left']
  ])('%i s is "%s"', (seconds, words) => {
    expect(timeLeft(NOW + seconds * 1000, NOW)).toBe(words);
  });

  it('rounds to the nearest second', () => {
    expect(timeLeft(NOW + 44_600, NOW)).toBe('45 s left');
  });

  it('says when the deadline passed, and how long ago after a minute', () => {
    expect(timeLeft(NOW, NOW)).toBe('the deadline has passed');
    expect(timeLeft(NOW - 59_000, NOW)).toBe('the deadline has passed');
    expect(timeLeft(NOW - 120_000, NOW)).toBe('the deadline passed 2 min ago');
  });
});

describe('whoMayAnswer', () => {
  it('says anyone for a prompt of anyone', () => {
    expect(whoMayAnswer(item())).toBe('anyone may answer');
  });

  it('names the people a prompt is for', () => {
    expect(whoMayAnswer(item({ specific: ['bob', 'carol'] }))).toBe(
      'for bob, carol'
    );
  });

  it("counts a consensus, says when the answers differ and that this user's counted", () => {
    expect(whoMayAnswer(item({ needed: 2, agreeing: 1, answers: 1 }))).toBe(
      '2 must agree: 1 so far'
    );
    expect(
      whoMayAnswer(
        item({
          needed: 3,
          agreeing: 1,
          answers: 2,
          disagreement: true,
          answered: true,
          specific: ['bob']
        })
      )
    ).toBe(
      'for bob; 3 must agree: 1 so far, the answers differ; your answer counted'
    );
  });

  it('leaves the count out where it is drawn apart (the answer card)', () => {
    const counted = item({
      needed: 2,
      agreeing: 1,
      answers: 1,
      answered: true
    });
    expect(whoMayAnswer(counted, false)).toBe('2 must agree');
    expect(whoMayAnswer(item({ specific: ['bob'] }), false)).toBe('for bob');
  });
});

describe('the other words', () => {
  it('names an agent by its host and port, or as given', () => {
    expect(agentName('http://agent.example:8000/a2a')).toBe(
      'agent.example:8000'
    );
    expect(agentName('not a url')).toBe('not a url');
  });

  it('cuts a question at a number of code points, with an ellipsis', () => {
    expect(cut('short', 10)).toBe('short');
    expect(cut('abcdefghij', 5)).toBe('abcd…');
    expect(cut('😀😀😀😀', 3)).toBe('😀😀…'); // never half a character
  });

  it('counts prompts', () => {
    expect(prompts(1)).toBe('1 prompt');
    expect(prompts(2)).toBe('2 prompts');
    expect(prompts(0)).toBe('0 prompts');
  });
});
