/**
 * The order of every list of prompts (JupyterLab's panel, the answer page): no imports
 * of JupyterLab, so the answer page's bundle takes it as it is.
 */
import { PromptItem } from './contract';

/** Soonest deadline first; prompts without one after, the longest waiting first. */
export function soonestFirst(a: PromptItem, b: PromptItem): number {
  const da = a.deadline_at;
  const db = b.deadline_at;
  if (da !== db) {
    if (da === null) {
      return 1;
    }
    if (db === null) {
      return -1;
    }
    return da - db;
  }
  if (a.first_seen !== b.first_seen) {
    return a.first_seen - b.first_seen;
  }
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
