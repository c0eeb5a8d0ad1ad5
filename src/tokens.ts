/**
 * What the plugins share: one open prompt as the server lists it, and the model of the
 * open prompts of this page's user (the `IPrompts` token).
 */
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

import { Me, Place, PromptItem, RelayStatus } from './contract';

/** Which notebook cell shows a prompt's card (a kernel of this server said so). */
export type IPlace = Place;

/**
 * One open prompt, as `GET hitl/lab/prompts` lists it (the gateway's feed item): no
 * schema, the question cut at 1,000 characters (`prompt_length` is its length). Its
 * members are the contract's (`contract.ts`, generated from the schema the server's
 * output is checked against).
 */
export type IPromptItem = PromptItem;

/** Who the server takes the page's user for. */
export type IMe = Me;

/**
 * Where the list stands: `connecting` (not read yet), `ok`, `unavailable` (the
 * gateway or hub service cannot be reached: `message` says why), as the server says;
 * or `logged-out` (the page's login ended: nothing is shown), as the page finds.
 */
export interface IStatus extends Omit<RelayStatus, 'state'> {
  state: RelayStatus['state'] | 'logged-out';
}

/** What changed in one update of the list. */
export interface IPromptsChange {
  /** Keys of prompts seen for the first time by this page. */
  added: string[];
  /** Keys of prompts that left the list. */
  removed: string[];
  /** The whole list was read (the first time, or after a restart of the server). */
  reset: boolean;
  /** The page's first read: what it lists was waiting when the page opened, not new. */
  initial: boolean;
}

/** The open prompts of this page's user, kept current. */
export interface IPrompts {
  /** Every open prompt listed, soonest deadline first. */
  readonly items: ReadonlyArray<IPromptItem>;
  /** How many open prompts there are in all (a list carries at most 10,000). */
  readonly total: number;
  readonly status: IStatus;
  readonly me: IMe | null;
  /** Where prompts come from: `server` (this server's gateway) or `hub`. */
  readonly source: string;
  /** The kernel the panel starts to draw answer cards. */
  readonly kernelName: string;
  /** Emitted after each update of the list (and of the status). */
  readonly changed: ISignal<IPrompts, IPromptsChange>;
  /** The prompt with this key, if listed. */
  get(key: string): IPromptItem | undefined;
  /** Is this prompt one this user is asked to answer (notifications, counts)? */
  isForMe(item: IPromptItem): boolean;
  /** Milliseconds since the epoch when the prompt is due, by this page's clock. */
  dueAt(item: IPromptItem): number | null;
  /** The whole question of a prompt (a list carries the first 1,000 characters). */
  wholeQuestion(item: IPromptItem): Promise<string>;
  /** Read what changed now (the page came back, or a reconnection). */
  refresh(): Promise<void>;
}

/** The open prompts of this page's user. */
export const IPrompts = new Token<IPrompts>(
  'hitl-nb:IPrompts',
  'The open hitl-prompt/v1 prompts this user may answer, kept current by the server.'
);

/** Command ids the plugins run (the panel's, used by notifications and the URL). */
export namespace CommandIDs {
  export const openPanel = 'hitl-nb:open-prompts';
  export const answer = 'hitl-nb:answer-prompt';
  export const showCard = 'hitl-nb:show-card';
}
