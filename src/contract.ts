/**
 * The contract with the server, generated from hitl_nb/schemas/lab.schema.json by
 * `jlpm build:contract` (scripts/contract.mjs): do not edit. The server sends what
 * these types say (tests/test_lab_contract.py checks its output against the schema).
 */

/** The id of the event the pages hear on the server's event bus (LabEvent). */
export const EVENT_SCHEMA = 'urn:hitl-nb:events:lab-prompts:v1';

/** The routes the page reads, relative to the server's base URL. */
export namespace Routes {
  export const prompts = 'hitl/lab/prompts';
  export const places = 'hitl/lab/places';
}

/** The page URL's parameters that open one prompt (or the panel). */
export namespace UrlParameters {
  export const prompt = 'hitl-prompt';
  export const registration = 'hitl-registration';
  export const inbox = 'hitl-inbox';
}

/**
 * Where a prompt stands at the gateway: open (answers taken), forwarding (an answer is on its way to the agent), forwarded (the agent accepted one), expired (its deadline passed), closed (the task moved on).
 */
export type PromptState =
  'open' | 'forwarding' | 'forwarded' | 'expired' | 'closed';
/**
 * The events of the gateway's feed (GET api/feed, server-sent events).
 */
export type FeedEventName =
  'reset' | 'upsert' | 'remove' | 'synced' | 'unavailable';

/**
 * Every type of the contract, by name.
 */
export interface Contract {
  PromptState?: PromptState;
  Place?: Place;
  PromptItem?: PromptItem;
  RelayStatus?: RelayStatus;
  Me?: Me;
  Listing?: Listing;
  LabEvent?: LabEvent;
  FeedEventName?: FeedEventName;
  FeedReset?: FeedReset;
  FeedUpsert?: FeedUpsert;
  FeedRemove?: FeedRemove;
  FeedSynced?: FeedSynced;
  FeedUnavailable?: FeedUnavailable;
}
/**
 * Which notebook cell shows a prompt's card (a kernel of this server said so).
 */
export interface Place {
  kernel_id: string;
  cell_id: string;
}
/**
 * One open prompt as a list of prompts draws it (the gateway's feed item): no schema, the question cut at 1,000 characters (prompt_length is its length), never anyone's answer.
 */
export interface PromptItem {
  /**
   * registration/prompt_id: the prompt's key in a list.
   */
  key: string;
  registration: string;
  agent_url: string;
  task_id: string;
  prompt_id: string;
  prompt: string;
  prompt_length: number;
  /**
   * The envelope's deadline (RFC 3339), as the agent wrote it.
   */
  deadline: string | null;
  /**
   * The deadline in seconds since the epoch, by the server's clock.
   */
  deadline_at: number | null;
  /**
   * When the gateway first saw the prompt, in seconds since the epoch.
   */
  first_seen: number;
  allowed_responders: string[];
  /**
   * The people named in allowed_responders (specific:NAME).
   */
  specific: string[];
  /**
   * How many people must give the same answer (consensus:N; 1 otherwise).
   */
  needed: number;
  state: PromptState;
  may_answer: boolean;
  /**
   * Why this user may not answer, in words (null: they may).
   */
  why_not: string | null;
  /**
   * The two-person rule applies to its task: whoever registered it cannot answer alone.
   */
  two_person: boolean;
  answers: number;
  agreeing: number;
  disagreement: boolean;
  /**
   * This user's answer to a consensus prompt was counted already.
   */
  answered: boolean;
  registered_by: string;
  place?: Place;
}
/**
 * Where the server's list stands: connecting (not read yet), ok, unavailable (the gateway or the hub's service cannot be reached: message says why).
 */
export interface RelayStatus {
  state: 'connecting' | 'ok' | 'unavailable';
  message: string;
  /**
   * The list's source, in words.
   */
  where?: string;
}
/**
 * Who the server takes the page's user for.
 */
export interface Me {
  name: string | null;
  display_name: string;
  identified: boolean;
}
/**
 * The answer to GET hitl/lab/prompts?epoch=E&since=N: the changes after number N of the relay's run E (upsert, remove), or the whole list (full, items).
 */
export interface Listing {
  feed: string;
  epoch: string;
  seq: number;
  status: RelayStatus;
  source: {
    kind: 'server' | 'hub';
    where: string;
  };
  /**
   * How many open prompts there are in all (a list carries at most 10,000).
   */
  total: number;
  /**
   * The server's clock, in seconds since the epoch.
   */
  now: number;
  me: Me;
  /**
   * The kernel the panel starts to draw answer cards.
   */
  kernel: string;
  full: boolean;
  items?: PromptItem[];
  upsert?: PromptItem[];
  remove?: string[];
}
/**
 * A relay of the hitl-nb server extension has a new list of open prompts: pages that show it read what changed since the seq they have, with their own login, from {base_url}hitl/lab/prompts. The event carries no prompt.
 */
export interface LabEvent {
  /**
   * which relay (a user of this server, or the hub's service)
   */
  feed: string;
  /**
   * the relay's run (numbers of another run mean nothing)
   */
  epoch: string;
  /**
   * the relay's change number
   */
  seq: number;
}
/**
 * event: reset. A snapshot follows (upserts, then synced).
 */
export interface FeedReset {
  total: number;
}
/**
 * event: upsert. Prompts added or changed.
 */
export interface FeedUpsert {
  items: PromptItem[];
}
/**
 * event: remove. The keys of prompts that left.
 */
export interface FeedRemove {
  keys: string[];
}
/**
 * event: synced. Everything since the last synced is whole; total counts the open prompts in all.
 */
export interface FeedSynced {
  total: number;
}
/**
 * event: unavailable. The gateway's database cannot be reached (message says why).
 */
export interface FeedUnavailable {
  message: string;
}
