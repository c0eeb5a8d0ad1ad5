/**
 * The form's DOM helpers and words: every text from the schema is set with
 * `textContent` (S-1: titles, descriptions and choices are data, never markup), and a
 * property's name becomes words ("dueDate", "due_date" -> "Due date").
 */

/** A field's problem, at a JSON Pointer ("" is the whole answer). */
export interface IFieldError {
  pointer: string;
  message: string;
}

/** What the fields share: the document, fresh ids and the form's change signal. */
export class Context {
  constructor(
    readonly doc: Document,
    readonly prefix: string,
    readonly changed: () => void
  ) {}

  /** Fields built so far (a form draws at most `MAX_FIELDS`). */
  count = 0;

  /** A fresh element id. */
  id(): string {
    this._n += 1;
    return `${this.prefix}${this._n}`;
  }

  el<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    className = '',
    text?: string
  ): HTMLElementTagNameMap[K] {
    const node = this.doc.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  button(
    text: string,
    className: string,
    onClick: () => void
  ): HTMLButtonElement {
    const node = this.el('button', `hitl-f-form-button ${className}`, text);
    node.type = 'button';
    node.addEventListener('click', event => {
      event.preventDefault();
      onClick();
      this.changed();
    });
    return node;
  }

  private _n = 0;
}

/** A property's name in words: "dueDate" / "due_date" / "due-date" -> "Due date";
 * words in capitals ("URL") are kept. */
export function words(name: string): string {
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean);
  if (!parts.length) {
    return name;
  }
  const out = parts.map(w =>
    w.length > 1 && w === w.toUpperCase() ? w : w.toLowerCase()
  );
  out[0] = out[0].charAt(0).toUpperCase() + out[0].slice(1);
  return out.join(' ');
}

/** A JSON value as a person reads it in a choice: text as it is, the rest as JSON. */
export function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A class-name-safe form of a property name. */
export function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}
