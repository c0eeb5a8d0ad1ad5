/**
 * The answer form in the browser: a prompt's `response_schema` drawn as plain DOM, with
 * no kernel and no framework (the Lab panel and the answer page both use it).
 *
 * `renderForm(host, schema, {value})` appends the form to `host`; `value()` gives
 * exactly what was entered (nothing added, nothing dropped, types kept) or the inputs
 * that cannot be read; `showErrors` puts the gateway's (or the agent's 422)
 * `validation_errors` on the fields, named by their labels. What the fields cannot draw
 * is a JSON editor for that part (never dropped); a schema none of whose parts can be
 * drawn is one JSON editor (`jsonFallback`). Text from the schema is text (S-1).
 */
import { Context, IFieldError } from './dom';
import { ABSENT, builder, IField, JsonField } from './fields';
import { Resolver } from './schema';

export type { IFieldError } from './dom';

export interface IFormOptions {
  /** The value the form starts with, drawn exactly (no defaults added to it). */
  value?: unknown;
  /** Prefix of the element ids (several forms on one page). */
  idPrefix?: string;
  document?: Document;
}

export interface IRenderedForm {
  /** The form's root, already appended to the host. */
  readonly element: HTMLElement;
  /** Exactly what was entered, or what cannot be read. */
  value():
    { ok: true; value: unknown } | { ok: false; problems: IFieldError[] };
  /** Problems shown on the fields they name (and listed, in words, at the top). */
  showErrors(errors: IFieldError[]): void;
  clearErrors(): void;
  onChange(cb: () => void): void;
  /** The whole schema is one JSON editor. */
  readonly jsonFallback: boolean;
  dispose(): void;
}

let forms = 0;

function unescape(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Draw `schema` as a form inside `host`. */
export function renderForm(
  host: HTMLElement,
  schema: unknown,
  options: IFormOptions = {}
): IRenderedForm {
  forms += 1;
  const doc = options.document ?? host.ownerDocument ?? document;
  const listeners: Array<() => void> = [];
  const changed = (): void => {
    for (const cb of listeners) {
      cb();
    }
  };
  const ctx = new Context(
    doc,
    options.idPrefix ?? `hitl-form-${forms}-`,
    changed
  );
  const element = ctx.el('div', 'hitl-f-form hitl-form');
  const summary = ctx.el('div', 'hitl-f-summary');
  summary.setAttribute('role', 'alert');
  summary.hidden = true;
  element.append(summary);
  const given =
    'value' in options && options.value !== undefined ? options.value : ABSENT;
  const root: IField = builder(new Resolver(schema))(ctx, {
    schema,
    name: null,
    required: true,
    value: given,
    fresh: given === ABSENT,
    depth: 0
  });
  element.append(root.element);
  element.addEventListener('input', changed);
  element.addEventListener('change', changed);
  host.append(element);
  let marked: IField[] = [];

  /** The deepest drawn field on the way to `pointer`, and the labels on the way. */
  const locate = (pointer: string): { field: IField; labels: string[] } => {
    let field = root;
    const labels: string[] = root.label ? [root.label] : [];
    const segments =
      pointer === '' ? [] : pointer.slice(1).split('/').map(unescape);
    for (const segment of segments) {
      let next: IField | null = field;
      // fields drawn at the same pointer (a variant's option, a nullable's field)
      for (;;) {
        const kids: Array<[string | null, IField]> = next.children();
        const same = kids.find(([k]) => k === null);
        const hit = kids.find(([k]) => k === segment);
        if (hit) {
          next = hit[1];
          break;
        }
        if (!same) {
          next = null;
          break;
        }
        next = same[1];
      }
      if (!next) {
        break;
      }
      field = next;
      const label = field.label;
      labels.push(label === 'Entry' ? `entry ${Number(segment) + 1}` : label);
    }
    return { field, labels };
  };

  const clearErrors = (): void => {
    for (const field of marked) {
      field.setError(null);
    }
    marked = [];
    summary.hidden = true;
    summary.textContent = '';
  };

  const showErrors = (errors: IFieldError[]): void => {
    clearErrors();
    if (!errors.length) {
      return;
    }
    const byField = new Map<IField, string[]>();
    const list = ctx.el('ul', 'hitl-f-summary-list');
    for (const error of errors) {
      const { field, labels } = locate(error.pointer ?? '');
      byField.set(field, [...(byField.get(field) ?? []), error.message]);
      const where = labels.filter(Boolean).join(' › ') || 'The answer';
      const item = ctx.el('li');
      const jump = ctx.el(
        'button',
        'hitl-f-form-button hitl-f-jump',
        `${where}: ${error.message}`
      );
      jump.type = 'button';
      jump.dir = 'auto';
      jump.addEventListener('click', () => field.focus());
      item.append(jump);
      list.append(item);
    }
    for (const [field, messages] of byField) {
      field.setError(messages.join('; '));
      marked.push(field);
    }
    const count = errors.length;
    summary.append(
      ctx.el(
        'p',
        'hitl-f-summary-head',
        `${count} problem${count === 1 ? '' : 's'} to fix:`
      ),
      list
    );
    summary.hidden = false;
  };

  return {
    element,
    jsonFallback: root instanceof JsonField,
    value() {
      const problems: IFieldError[] = [];
      const value = root.read(problems, '');
      if (problems.length) {
        return { ok: false, problems };
      }
      if (value === ABSENT) {
        return {
          ok: false,
          problems: [{ pointer: '', message: 'Give an answer first' }]
        };
      }
      return { ok: true, value };
    },
    showErrors,
    clearErrors,
    onChange(cb: () => void) {
      listeners.push(cb);
    },
    dispose() {
      listeners.length = 0;
      element.remove();
    }
  };
}
