/**
 * Prompt items as the server lists them (the contract's `PromptItem`), for the tests.
 */
import { PromptItem } from '../contract';

/** An open prompt for anyone, with `changes` made to it. */
export function item(changes: Partial<PromptItem> = {}): PromptItem {
  const key = changes.key ?? 'r1/p1';
  const [registration, prompt_id] = key.split('/');
  return {
    key,
    registration,
    agent_url: 'http://agent.example:8000',
    task_id: 't1',
    prompt_id,
    prompt: 'Ship it?',
    prompt_length: 8,
    deadline: null,
    deadline_at: null,
    first_seen: 1_800_000_000,
    allowed_responders: ['any'],
    specific: [],
    needed: 1,
    state: 'open',
    may_answer: true,
    why_not: null,
    answers: 0,
    agreeing: 0,
    disagreement: false,
    answered: false,
    registered_by: 'alice',
    two_person: false,
    ...changes
  };
}
