/**
 * The few DOM helpers the answer page draws with: every text goes in as `textContent`
 * (S-1: a prompt is data, never markup), and `dir="auto"` lets a right-to-left question
 * read as it was written.
 */

/** A new element with `className`, and `text` as its text (never as markup). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** Text someone else wrote (a question, a reason): as text, in its own direction. */
export function foreign<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text: string
): HTMLElementTagNameMap[K] {
  const node = el(tag, className, text);
  node.dir = 'auto';
  return node;
}

/** A button of the page (at least 44 px tall: style/answer.css). */
export function button(
  label: string,
  className: string,
  onClick: () => void
): HTMLButtonElement {
  const node = el('button', `hitl-page-button ${className}`.trim(), label);
  node.type = 'button';
  node.addEventListener('click', () => onClick());
  return node;
}
