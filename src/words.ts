/**
 * Every word the extension shows about a prompt, in one place: plain text, set with
 * `textContent` wherever it is drawn (S-1: the prompt is data, never markup).
 */
import { IPromptItem } from './tokens';

/** How long until `dueAt` (ms since the epoch), in words: "4 min 12 s left". */
export function timeLeft(dueAt: number, now: number): string {
  const seconds = Math.round((dueAt - now) / 1000);
  if (seconds <= 0) {
    return seconds > -60
      ? 'the deadline has passed'
      : `the deadline passed ${span(-seconds)} ago`;
  }
  return `${span(seconds)} left`;
}

function span(seconds: number): string {
  if (seconds < 60) {
    return `${seconds} s`;
  }
  if (seconds < 3600) {
    const m = Math.floor(seconds / 60);
    const s = seconds % 60;
    return s && m < 10 ? `${m} min ${s} s` : `${m} min`;
  }
  if (seconds < 86400) {
    const h = Math.floor(seconds / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  const d = Math.floor(seconds / 86400);
  return `${d} day${d === 1 ? '' : 's'}`;
}

/** Who may answer, and how a consensus stands: "2 must agree: 1 so far" (`withCount`
 * false: "2 must agree", where the count is drawn apart). */
export function whoMayAnswer(item: IPromptItem, withCount = true): string {
  const parts: string[] = [];
  if (item.specific.length) {
    parts.push(`for ${item.specific.join(', ')}`);
  }
  if (item.needed > 1 && !withCount) {
    parts.push(`${item.needed} must agree`);
  } else if (item.needed > 1) {
    const count = `${item.needed} must agree: ${item.agreeing} so far`;
    parts.push(item.disagreement ? `${count}, the answers differ` : count);
    if (item.answered) {
      parts.push('your answer counted');
    }
  }
  return parts.length ? parts.join('; ') : 'anyone may answer';
}

/** The agent, as a person recognises it: its host (and port). */
export function agentName(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** At most `length` characters of `text` (a character is a code point), with "…". */
export function cut(text: string, length: number): string {
  const points = Array.from(text);
  return points.length <= length
    ? text
    : points.slice(0, length - 1).join('') + '…';
}

/** "2 prompts" / "1 prompt". */
export function prompts(count: number): string {
  return `${count.toLocaleString()} prompt${count === 1 ? '' : 's'}`;
}
