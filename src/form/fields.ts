/**
 * The fields, one class per kind (as the Python forms' registry: `hitl_nb/forms/`), and
 * `build`, which picks one for a schema node and a value.
 *
 * Exactness: a field takes a value only when it can give it back unchanged; a value it
 * cannot hold (a number where the schema says text, a string with a carriage return,
 * a date the date picker would rewrite, an integer beyond 2^53) makes that subtree a
 * JSON editor holding the value as it was. Nothing is added: an untouched optional
 * field is left out; defaults are proposed only on a form (or a section, an entry)
 * opened without a value, as the Python Form does.
 */
import { Context, IFieldError, shown, slug, words } from './dom';
import {
  INode,
  isObject,
  jsonEqual,
  Resolver,
  Schema,
  conditionalProperties
} from './schema';

/** What a left-out field reads as. */
export const ABSENT: unique symbol = Symbol('absent');

/** Beyond these a subtree is one JSON editor. */
export const MAX_FIELDS = 2500;
export const MAX_DEPTH = 32;
export const MAX_ENTRIES = 500;

/** One drawn field. */
export interface IField {
  readonly element: HTMLElement;
  /** Its label, in words ("" for the form itself). */
  readonly label: string;
  /** Its value now (ABSENT: left out); problems reading the inputs are pushed. */
  read(problems: IFieldError[], pointer: string): unknown;
  /** The fields inside, by pointer segment (null: at this field's own pointer). */
  children(): Array<[string | null, IField]>;
  setError(message: string | null): void;
  focus(): void;
  /** A JSON editor (the form draws a whole JSON fallback when its root is one). */
  readonly json?: boolean;
}

/** Where a field goes and what it starts with. */
export interface ISlot {
  schema: unknown;
  name: string | null;
  required: boolean;
  /** The value given (ABSENT: none). */
  value: unknown;
  /** Opened without a value: defaults are proposed. */
  fresh: boolean;
  depth: number;
}

/** A value the field cannot hold unchanged: the factory draws JSON instead. */
class Misfit extends Error {}

type Hints = { [key: string]: unknown };

function hints(schema: Schema): Hints {
  const out: Hints = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k.startsWith('x-ui-')) {
      out[k.slice(5)] = v;
    }
  }
  return out;
}

function fallbackLabel(slot: ISlot): string {
  return slot.depth === 0 ? 'Answer' : 'Entry';
}

function labelOf(schema: Schema, name: string | null): string {
  if (typeof schema.title === 'string' && schema.title.trim()) {
    return schema.title;
  }
  return name === null ? '' : words(name);
}

function helpOf(schema: Schema, h: Hints): string {
  for (const text of [h.help, schema.description, schema.markdownDescription]) {
    if (typeof text === 'string' && text.trim()) {
      return text;
    }
  }
  return '';
}

/** A field's frame: label (or legend), help, error, and the ARIA links between them. */
class Box {
  constructor(
    ctx: Context,
    spec: {
      label: string;
      help: string;
      required: boolean;
      name: string | null;
      group: boolean;
    },
    kind: string
  ) {
    this._ctx = ctx;
    const slugged = spec.name === null ? '_root' : slug(spec.name);
    this.element = ctx.el(
      spec.group ? 'fieldset' : 'div',
      `hitl-f-field hitl-field-${slugged} hitl-f-kind-${kind}`
    );
    this.label = ctx.el(spec.group ? 'legend' : 'label', 'hitl-f-label');
    if (spec.label) {
      this.label.append(ctx.doc.createTextNode(spec.label));
      if (spec.required) {
        const mark = ctx.el('span', 'hitl-f-required', ' *');
        mark.setAttribute('aria-hidden', 'true');
        this.label.append(mark);
      }
      this.element.append(this.label);
    }
    this.helpId = ctx.id();
    if (spec.help) {
      const help = ctx.el('p', 'hitl-f-help', spec.help);
      help.id = this.helpId;
      help.dir = 'auto';
      this.element.append(help);
      this._described.push(this.helpId);
    }
    this.error = ctx.el('p', 'hitl-f-error');
    this.error.id = ctx.id();
    this.error.hidden = true;
    this._required = spec.required;
  }

  readonly element: HTMLElement;
  readonly label: HTMLElement;
  readonly error: HTMLElement;
  readonly helpId: string;

  /** An input of this field: labelled (the first one by the label) and described. */
  control<T extends HTMLElement>(input: T, own?: string): T {
    input.id = input.id || this._ctx.id();
    if (own !== undefined) {
      const label = this._ctx.el('label', 'hitl-f-option-label', own);
      label.htmlFor = input.id;
      this._pending.push(label);
    } else if (this.label instanceof HTMLLabelElement && !this.label.htmlFor) {
      this.label.htmlFor = input.id;
    }
    if (this._required && own === undefined) {
      input.setAttribute('aria-required', 'true');
    }
    this._controls.push(input);
    this._link(input);
    return input;
  }

  /** The label made for the last `control(input, own)`. */
  takeLabel(): HTMLLabelElement {
    return this._pending.pop() as HTMLLabelElement;
  }

  finish(): void {
    this.element.append(this.error);
    this.element.addEventListener('input', () => this.setError(null));
    this.element.addEventListener('change', () => this.setError(null));
  }

  setError(message: string | null): void {
    if (message === null && this.error.hidden) {
      return;
    }
    this.error.textContent = message ?? '';
    this.error.hidden = message === null;
    for (const input of this._controls) {
      if (message === null) {
        input.removeAttribute('aria-invalid');
      } else {
        input.setAttribute('aria-invalid', 'true');
      }
      this._link(input);
    }
    this.element.classList.toggle('hitl-f-invalid', message !== null);
  }

  focus(): void {
    (
      this._controls.find(c => !(c as HTMLInputElement).disabled) ??
      this.element
    ).focus();
  }

  private _link(input: HTMLElement): void {
    const ids = [...this._described];
    if (!this.error.hidden) {
      ids.push(this.error.id);
    }
    if (ids.length) {
      input.setAttribute('aria-describedby', ids.join(' '));
    } else {
      input.removeAttribute('aria-describedby');
    }
  }

  private _ctx: Context;
  private _controls: HTMLElement[] = [];
  private _described: string[] = [];
  private _pending: HTMLLabelElement[] = [];
  private _required: boolean;
}

/** The base of the leaf fields: a Box and one focusable control. */
abstract class Leaf implements IField {
  constructor(ctx: Context, node: INode, slot: ISlot, group = false) {
    this.ctx = ctx;
    this.node = node;
    this.slot = slot;
    this.hints = hints(node.schema);
    this.label = labelOf(node.schema, slot.name) || fallbackLabel(slot);
    this.box = new Box(
      ctx,
      {
        label: this.label,
        help: helpOf(node.schema, this.hints),
        required: slot.required,
        name: slot.name,
        group
      },
      node.kind
    );
    this.element = this.box.element;
  }

  abstract read(problems: IFieldError[], pointer: string): unknown;

  children(): Array<[string | null, IField]> {
    return [];
  }

  setError(message: string | null): void {
    this.box.setError(message);
  }

  focus(): void {
    this.box.focus();
  }

  readonly element: HTMLElement;
  readonly label: string;
  protected ctx: Context;
  protected node: INode;
  protected slot: ISlot;
  protected hints: Hints;
  protected box: Box;
}

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Text, numbers and whole numbers: a text input (a textarea for long text). */
class TextField extends Leaf {
  constructor(ctx: Context, node: INode, slot: ISlot, initial: unknown) {
    super(ctx, node, slot);
    const s = node.schema;
    const text =
      initial === ABSENT
        ? ''
        : typeof initial === 'string'
          ? initial
          : String(initial);
    const long =
      this.hints.widget === 'textarea' ||
      (typeof s.maxLength === 'number' && s.maxLength > 200) ||
      text.includes('\n');
    let input: HTMLInputElement | HTMLTextAreaElement;
    if (long) {
      input = ctx.el('textarea', 'hitl-f-input hitl-f-textarea');
      input.rows = typeof this.hints.rows === 'number' ? this.hints.rows : 4;
    } else {
      input = ctx.el('input', 'hitl-f-input');
      input.type = this.hints.widget === 'password' ? 'password' : 'text';
      if (node.kind !== 'string') {
        input.inputMode = node.kind === 'integer' ? 'numeric' : 'decimal';
      } else if (s.format === 'email') {
        input.inputMode = 'email';
        input.autocomplete = 'email';
      } else if (
        s.format === 'uri' ||
        s.format === 'url' ||
        s.format === 'iri'
      ) {
        input.inputMode = 'url';
      }
    }
    const placeholder: unknown =
      this.hints.placeholder ??
      (Array.isArray(s.examples) ? s.examples[0] : undefined);
    if (placeholder !== undefined) {
      input.placeholder = shown(placeholder);
    }
    input.value = text;
    if (input.value !== text) {
      throw new Misfit('the text input would change it');
    }
    this.input = this.box.control(input);
    this._keepEmpty = initial === '';
    input.addEventListener('input', () => {
      this._keepEmpty = false;
    });
    this.box.element.append(input);
    this.box.finish();
  }

  read(problems: IFieldError[], pointer: string): unknown {
    const text = this.input.value;
    if (text === '') {
      if (this._keepEmpty) {
        return '';
      }
      return 'emptyValue' in this.hints ? this.hints.emptyValue : ABSENT;
    }
    if (this.node.kind === 'string') {
      return text;
    }
    const trimmed = text.trim();
    const whole = this.node.kind === 'integer';
    if (!NUMBER.test(trimmed)) {
      problems.push({
        pointer,
        message: whole ? 'Enter a whole number' : 'Enter a number'
      });
      return ABSENT;
    }
    const value = Number(trimmed);
    if (!Number.isFinite(value)) {
      problems.push({ pointer, message: 'This number is too large' });
      return ABSENT;
    }
    if (whole && !Number.isInteger(value)) {
      problems.push({ pointer, message: 'Enter a whole number' });
      return ABSENT;
    }
    if (whole && !Number.isSafeInteger(value)) {
      problems.push({
        pointer,
        message: `This whole number is too large to send exactly (at most ${Number.MAX_SAFE_INTEGER.toLocaleString('en')})`
      });
      return ABSENT;
    }
    return value;
  }

  readonly input: HTMLInputElement | HTMLTextAreaElement;
  private _keepEmpty: boolean;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z|[+-]\d{2}:\d{2})$/;
const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z|[+-]\d{2}:\d{2})$/;

/** This browser's UTC offset now, as RFC 3339 writes it ("Z", "+02:00"). */
function localOffset(): string {
  const minutes = -new Date().getTimezoneOffset();
  if (!minutes) {
    return 'Z';
  }
  const sign = minutes > 0 ? '+' : '-';
  const abs = Math.abs(minutes);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** `format: date` (a date picker), `date-time` and `time` (a picker and its UTC
 * offset: a value keeps its timezone; one left untouched comes back as written). */
class DateField extends Leaf {
  constructor(ctx: Context, node: INode, slot: ISlot, initial: unknown) {
    super(ctx, node, slot);
    const format = node.schema.format as string;
    this._format = format;
    this._given = initial;
    const input = ctx.el('input', 'hitl-f-input');
    input.type =
      format === 'date'
        ? 'date'
        : format === 'time'
          ? 'time'
          : 'datetime-local';
    if (format !== 'date') {
      input.step = '1';
    }
    let local = '';
    let offset = localOffset();
    if (typeof initial === 'string') {
      if (format === 'date') {
        if (!DATE.test(initial)) {
          throw new Misfit('not a date the picker shows');
        }
        local = initial;
      } else {
        const m = (format === 'time' ? TIME : DATE_TIME).exec(initial);
        if (!m) {
          throw new Misfit('not a time the picker shows');
        }
        local = format === 'time' ? m[1] : `${m[1]}T${m[2]}`;
        offset = m[m.length - 1];
      }
      input.value = local;
      if (!input.value) {
        throw new Misfit('the picker refuses it');
      }
    }
    this.input = this.box.control(input);
    const row = ctx.el('div', 'hitl-f-row');
    row.append(input);
    if (format !== 'date') {
      const zone = ctx.el('input', 'hitl-f-input hitl-f-offset');
      zone.type = 'text';
      zone.value = offset;
      zone.placeholder = 'Z or +02:00';
      this.box.control(zone, 'UTC offset');
      row.append(this.box.takeLabel(), zone);
      this._zone = zone;
    }
    for (const el of [input, this._zone]) {
      el?.addEventListener('input', () => {
        this._touched = true;
      });
    }
    this.box.element.append(row);
    this.box.finish();
  }

  read(problems: IFieldError[], pointer: string): unknown {
    if (!this._touched) {
      return this._given;
    }
    const local = this.input.value;
    if (!local) {
      return ABSENT;
    }
    if (this._format === 'date') {
      return local;
    }
    const seconds = /\d{2}:\d{2}$/.test(local) ? `${local}:00` : local;
    const zone = (this._zone?.value ?? '').trim() || 'Z';
    if (!/^(Z|[+-]\d{2}:\d{2})$/.test(zone)) {
      problems.push({
        pointer,
        message: 'Write the UTC offset as Z or as +02:00'
      });
      return ABSENT;
    }
    return seconds + zone;
  }

  readonly input: HTMLInputElement;
  private _zone: HTMLInputElement | null = null;
  private _format: string;
  private _given: unknown;
  private _touched = false;
}

/** Yes or no: a checkbox left out until touched; Yes / No with neither chosen where
 * the answer is required and the schema proposes none (never a silent false). */
class BooleanField extends Leaf {
  constructor(ctx: Context, node: INode, slot: ISlot, initial: unknown) {
    const radio =
      hints(node.schema).widget === 'radio' ||
      (hints(node.schema).widget !== 'checkbox' &&
        slot.required &&
        !('default' in node.schema));
    super(ctx, node, slot, radio);
    this._present = initial !== ABSENT;
    if (radio) {
      const name = ctx.id();
      const row = ctx.el('div', 'hitl-f-choices');
      for (const [text, value] of [
        ['Yes', true],
        ['No', false]
      ] as const) {
        const input = ctx.el('input', 'hitl-f-radio');
        input.type = 'radio';
        input.name = name;
        input.checked = initial === value;
        this.box.control(input, text);
        const option = ctx.el('span', 'hitl-f-choice');
        option.append(input, this.box.takeLabel());
        row.append(option);
        this._radios.push([input, value]);
      }
      this.box.element.append(row);
    } else {
      const input = ctx.el('input', 'hitl-f-checkbox');
      input.type = 'checkbox';
      input.checked = initial === true;
      input.addEventListener('change', () => {
        this._present = true;
      });
      const row = ctx.el('div', 'hitl-f-row');
      this.box.control(input);
      row.append(input);
      // The label precedes; a checkbox's own label is the field's.
      this.box.element.insertBefore(row, this.box.label.nextSibling);
      this._box = input;
    }
    this.box.finish();
  }

  read(): unknown {
    if (this._box) {
      return this._present ? this._box.checked : ABSENT;
    }
    const chosen = this._radios.find(([input]) => input.checked);
    return chosen ? chosen[1] : ABSENT;
  }

  private _present: boolean;
  private _radios: Array<[HTMLInputElement, boolean]> = [];
  private _box: HTMLInputElement | null = null;
}

function choiceLabels(schema: Schema, count: number): string[] | null {
  const h = hints(schema);
  const names = h.enumNames ?? schema.enumNames;
  return Array.isArray(names) && names.length === count
    ? names.map(String)
    : null;
}

/** A choice of the schema's values: a select (radios by hint), nothing chosen. */
class EnumField extends Leaf {
  constructor(ctx: Context, node: INode, slot: ISlot, initial: unknown) {
    const radio = hints(node.schema).widget === 'radio';
    super(ctx, node, slot, radio);
    const values = node.schema.enum as unknown[];
    this._values = values;
    const names = choiceLabels(node.schema, values.length);
    const at =
      initial === ABSENT ? -1 : values.findIndex(v => jsonEqual(v, initial));
    if (radio) {
      const name = ctx.id();
      const row = ctx.el('div', 'hitl-f-choices');
      values.forEach((value, i) => {
        const input = ctx.el('input', 'hitl-f-radio');
        input.type = 'radio';
        input.name = name;
        input.value = String(i);
        input.checked = i === at;
        this.box.control(input, names?.[i] ?? shown(value));
        const option = ctx.el('span', 'hitl-f-choice');
        option.dir = 'auto';
        option.append(input, this.box.takeLabel());
        row.append(option);
        this._radios.push(input);
      });
      this.box.element.append(row);
    } else {
      const select = ctx.el('select', 'hitl-f-input hitl-f-select');
      const none = ctx.el('option', '', slot.required ? 'Choose…' : '—');
      none.value = '';
      select.append(none);
      values.forEach((value, i) => {
        const option = ctx.el('option', '', names?.[i] ?? shown(value));
        option.value = String(i);
        select.append(option);
      });
      select.value = at < 0 ? '' : String(at);
      this.box.control(select);
      this.box.element.append(select);
      this._select = select;
    }
    this.box.finish();
  }

  read(): unknown {
    const raw = this._select
      ? this._select.value
      : (this._radios.find(r => r.checked)?.value ?? '');
    return raw === '' ? ABSENT : copy(this._values[Number(raw)]);
  }

  private _values: unknown[];
  private _select: HTMLSelectElement | null = null;
  private _radios: HTMLInputElement[] = [];
}

function copy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** A `const` (or `null`): shown as text, sent while "Include it" is ticked. */
class FixedField extends Leaf {
  constructor(ctx: Context, node: INode, slot: ISlot, initial: unknown) {
    super(ctx, node, slot);
    this._value = node.kind === 'null' ? null : node.schema.const;
    const text = ctx.el(
      'span',
      'hitl-f-fixed',
      node.kind === 'null' ? 'None' : shown(this._value)
    );
    text.dir = 'auto';
    const include = ctx.el('input', 'hitl-f-checkbox');
    include.type = 'checkbox';
    include.checked =
      initial !== ABSENT ||
      (slot.fresh && (node.kind === 'const' || slot.required));
    this.box.control(include, 'Include it in the answer');
    const row = ctx.el('div', 'hitl-f-row');
    row.append(text, include, this.box.takeLabel());
    this.box.element.append(row);
    this._include = include;
    this.box.finish();
  }

  read(): unknown {
    return this._include.checked ? copy(this._value) : ABSENT;
  }

  private _value: unknown;
  private _include: HTMLInputElement;
}

/** JSON text, for what the fields cannot draw (its own parse error shown). */
export class JsonField extends Leaf {
  constructor(
    ctx: Context,
    node: INode,
    slot: ISlot,
    initial: unknown,
    note: string
  ) {
    super(ctx, { ...node, kind: 'json' }, slot);
    const area = ctx.el('textarea', 'hitl-f-input hitl-f-json');
    area.spellcheck = false;
    area.rows = 6;
    area.value = initial === ABSENT ? '' : JSON.stringify(initial, null, 2);
    this.input = this.box.control(area);
    const why = ctx.el('p', 'hitl-f-note', `Written as JSON: ${note}.`);
    this.box.element.append(why, area);
    this.box.finish();
  }

  readonly json = true;

  read(problems: IFieldError[], pointer: string): unknown {
    const text = this.input.value;
    if (!text.trim()) {
      return ABSENT;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      problems.push({
        pointer,
        message: `This is not valid JSON (${(error as Error).message})`
      });
      return ABSENT;
    }
  }

  readonly input: HTMLTextAreaElement;
}

/** A field that is allowed `null` too: a "None" checkbox beside it. */
class NullableField implements IField {
  constructor(ctx: Context, inner: IField, isNull: boolean) {
    this.inner = inner;
    this.label = inner.label;
    this.element = ctx.el('div', 'hitl-f-nullable');
    const none = ctx.el('input', 'hitl-f-checkbox');
    none.type = 'checkbox';
    none.id = ctx.id();
    none.checked = isNull;
    const label = ctx.el('label', 'hitl-f-option-label', 'None');
    label.htmlFor = none.id;
    none.setAttribute('aria-label', `${inner.label || 'Answer'}: None`);
    label.setAttribute('aria-hidden', 'true');
    const row = ctx.el('div', 'hitl-f-row hitl-f-none');
    row.append(none, label);
    this.element.append(inner.element, row);
    const sync = (): void => {
      inner.element.classList.toggle('hitl-f-off', none.checked);
      for (const input of inner.element.querySelectorAll(
        'input,select,textarea,button'
      )) {
        (input as HTMLInputElement).disabled = none.checked;
      }
    };
    none.addEventListener('change', sync);
    sync();
    this._none = none;
  }

  read(problems: IFieldError[], pointer: string): unknown {
    return this._none.checked ? null : this.inner.read(problems, pointer);
  }

  children(): Array<[string | null, IField]> {
    return this._none.checked ? [] : [[null, this.inner]];
  }

  setError(message: string | null): void {
    this.inner.setError(message);
  }

  focus(): void {
    this.inner.focus();
  }

  readonly element: HTMLElement;
  readonly label: string;
  readonly inner: IField;
  private _none: HTMLInputElement;
}

function define(
  target: { [key: string]: unknown },
  key: string,
  value: unknown
): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true
  });
}

function has(target: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(target, key);
}

/** A nested object: a fieldset with a legend; an optional one is added and removed. */
class ObjectField implements IField {
  constructor(
    ctx: Context,
    build: Builder,
    node: INode,
    slot: ISlot,
    initial: unknown
  ) {
    this._ctx = ctx;
    this._build = build;
    this._node = node;
    this._slot = slot;
    const s = node.schema;
    this._root = slot.name === null && slot.depth === 0;
    this.label = labelOf(s, slot.name);
    this._box = new Box(
      ctx,
      {
        label: this._root ? '' : this.label,
        help: helpOf(s, hints(s)),
        required: slot.required,
        name: slot.name,
        group: !this._root
      },
      'object'
    );
    this.element = this._box.element;
    this._body = ctx.el('div', 'hitl-f-members');
    this.element.append(this._body);
    if (!this._root) {
      const noun = this.label || 'this section';
      this._add = ctx.button(`Add ${noun}`, 'hitl-f-add', () =>
        this._open(ABSENT, true)
      );
      this._remove = ctx.button(`Remove ${noun}`, 'hitl-f-remove', () =>
        this._close()
      );
      this.element.append(this._add, this._remove);
    }
    this._box.finish();
    const present =
      initial !== ABSENT || this._root || (slot.fresh && slot.required);
    if (present) {
      this._open(initial, initial === ABSENT && slot.fresh);
    } else {
      this._sync();
    }
  }

  private _open(initial: unknown, fresh: boolean): void {
    this._present = true;
    this._body.textContent = '';
    this._members = [];
    this._rows = [];
    const s = this._node.schema;
    const given = isObject(initial) ? initial : {};
    const props: Schema = isObject(s.properties) ? s.properties : {};
    const extraProps = conditionalProperties(s);
    const required = Array.isArray(s.required) ? s.required.map(String) : [];
    const names = order(
      [
        ...Object.keys(props),
        ...Object.keys(extraProps).filter(n => !has(props, n))
      ],
      hints(s).order
    );
    for (const name of names) {
      const field = this._build(this._ctx, {
        schema: has(props, name) ? props[name] : extraProps[name],
        name,
        required: required.includes(name),
        value: has(given, name) ? given[name] : ABSENT,
        fresh,
        depth: this._slot.depth + 1
      });
      this._members.push([name, field]);
      this._body.append(field.element);
    }
    const map =
      isObject(s.additionalProperties) ||
      isObject(s.patternProperties) ||
      Object.keys(given).some(k => !names.includes(k));
    if (map) {
      this._map = this._ctx.el('fieldset', 'hitl-f-map');
      this._map.append(this._ctx.el('legend', 'hitl-f-label', 'Other entries'));
      this._mapRows = this._ctx.el('div', 'hitl-f-rows');
      this._map.append(this._mapRows);
      this._map.append(
        this._ctx.button('Add an entry', 'hitl-f-add', () =>
          this._addRow('', ABSENT, true)
        )
      );
      this._body.append(this._map);
      for (const [key, value] of Object.entries(given)) {
        if (!names.includes(key)) {
          this._addRow(key, value, false);
        }
      }
    }
    this._sync();
  }

  private _valueSchema(key: string): unknown {
    const s = this._node.schema;
    if (isObject(s.patternProperties)) {
      for (const [pattern, sub] of Object.entries(s.patternProperties)) {
        try {
          if (new RegExp(pattern, 'u').test(key)) {
            return sub;
          }
        } catch {
          // a pattern JavaScript cannot read matches nothing here
        }
      }
    }
    return s.additionalProperties === undefined ||
      s.additionalProperties === false
      ? true
      : s.additionalProperties;
  }

  private _addRow(key: string, value: unknown, fresh: boolean): void {
    const ctx = this._ctx;
    const row = ctx.el('div', 'hitl-f-entry hitl-f-map-row');
    const name = ctx.el('input', 'hitl-f-input hitl-f-key');
    name.type = 'text';
    name.value = key;
    name.id = ctx.id();
    const nameLabel = ctx.el('label', 'hitl-f-label', 'Name');
    nameLabel.htmlFor = name.id;
    const field = this._build(ctx, {
      schema: this._valueSchema(key),
      name: 'value',
      required: true,
      value,
      fresh,
      depth: this._slot.depth + 1
    });
    const entry: [HTMLInputElement, IField] = [name, field];
    const remove = ctx.button('Remove entry', 'hitl-f-remove', () => {
      this._rows = this._rows.filter(r => r !== entry);
      row.remove();
    });
    row.append(nameLabel, name, field.element, remove);
    this._rows.push(entry);
    this._mapRows?.append(row);
  }

  private _close(): void {
    this._present = false;
    this._body.textContent = '';
    this._members = [];
    this._rows = [];
    this._sync();
  }

  private _sync(): void {
    this._body.hidden = !this._present;
    if (this._add && this._remove) {
      this._add.hidden = this._present;
      this._remove.hidden = !this._present || this._slot.required;
    }
  }

  read(problems: IFieldError[], pointer: string): unknown {
    if (!this._present) {
      return ABSENT;
    }
    const out: { [key: string]: unknown } = {};
    for (const [name, field] of this._members) {
      const value = field.read(problems, `${pointer}/${escape(name)}`);
      if (value !== ABSENT) {
        define(out, name, value);
      }
    }
    for (const [input, field] of this._rows) {
      const key = input.value;
      const at = `${pointer}/${escape(key)}`;
      if (has(out, key)) {
        problems.push({
          pointer: at,
          message: `Two entries are named "${key}"`
        });
        continue;
      }
      const value = field.read(problems, at);
      if (value === ABSENT) {
        problems.push({
          pointer: at,
          message: `The entry "${key}" has no value`
        });
        continue;
      }
      define(out, key, value);
    }
    return out;
  }

  children(): Array<[string | null, IField]> {
    return [
      ...this._members,
      ...this._rows.map(
        ([input, field]) => [input.value, field] as [string, IField]
      )
    ];
  }

  setError(message: string | null): void {
    this._box.setError(message);
  }

  focus(): void {
    (this._members[0]?.[1] ?? this._box).focus();
  }

  readonly element: HTMLElement;
  readonly label: string;
  private _ctx: Context;
  private _build: Builder;
  private _node: INode;
  private _slot: ISlot;
  private _root: boolean;
  private _box: Box;
  private _body: HTMLElement;
  private _add: HTMLButtonElement | null = null;
  private _remove: HTMLButtonElement | null = null;
  private _present = false;
  private _members: Array<[string, IField]> = [];
  private _rows: Array<[HTMLInputElement, IField]> = [];
  private _map: HTMLElement | null = null;
  private _mapRows: HTMLElement | null = null;
}

function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function order(names: string[], hint: unknown): string[] {
  if (!Array.isArray(hint)) {
    return names;
  }
  const listed = hint.map(String).filter(n => n === '*' || names.includes(n));
  const rest = names.filter(n => !listed.includes(n));
  const out: string[] = [];
  for (const n of listed) {
    if (n === '*') {
      out.push(...rest);
    } else {
      out.push(n);
    }
  }
  if (!listed.includes('*')) {
    out.push(...rest);
  }
  return out;
}

/** A list: entries added, removed and moved up; a tuple (`prefixItems`) keeps positions. */
class ArrayField implements IField {
  constructor(
    ctx: Context,
    build: Builder,
    node: INode,
    slot: ISlot,
    initial: unknown
  ) {
    this._ctx = ctx;
    this._build = build;
    this._node = node;
    this._slot = slot;
    const s = node.schema;
    this._tuple = node.kind === 'tuple';
    this._prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    this.label = labelOf(s, slot.name) || fallbackLabel(slot);
    this._box = new Box(
      ctx,
      {
        label: this.label,
        help: helpOf(s, hints(s)),
        required: slot.required,
        name: slot.name,
        group: true
      },
      node.kind
    );
    this.element = this._box.element;
    this._list = ctx.el('ol', 'hitl-f-entries');
    this._addButton = ctx.button(`Add to ${this.label}`, 'hitl-f-add', () => {
      this._present = true;
      this._addEntry(ABSENT, true);
    });
    this.element.append(this._list, this._addButton);
    this._box.finish();
    if (Array.isArray(initial)) {
      this._present = true;
      for (const value of initial) {
        this._addEntry(value, false);
      }
    } else if (slot.fresh && slot.required) {
      this._present = true;
      const count = this._tuple
        ? this._prefix.length
        : typeof s.minItems === 'number'
          ? Math.min(s.minItems, MAX_ENTRIES)
          : 0;
      for (let i = 0; i < count; i++) {
        this._addEntry(ABSENT, true);
      }
    }
    this._sync();
  }

  private _schemaAt(i: number): unknown {
    if (i < this._prefix.length) {
      return this._prefix[i];
    }
    const items = this._node.schema.items;
    return items === undefined ? true : items;
  }

  private _addEntry(value: unknown, fresh: boolean): void {
    const ctx = this._ctx;
    const i = this._entries.length;
    const item = ctx.el('li', 'hitl-f-entry');
    const field = this._build(ctx, {
      schema: this._schemaAt(i),
      name: null,
      required: true,
      value,
      fresh,
      depth: this._slot.depth + 1
    });
    const entry = { item, field };
    const tools = ctx.el('div', 'hitl-f-entry-tools');
    if (!this._tuple) {
      tools.append(
        ctx.button('Move up', 'hitl-f-up', () => this._move(entry)),
        ctx.button('Remove', 'hitl-f-remove', () => this._removeEntry(entry))
      );
    } else {
      const remove = ctx.button(
        'Remove',
        'hitl-f-remove hitl-f-remove-last',
        () => this._removeEntry(entry)
      );
      tools.append(remove);
    }
    item.append(field.element, tools);
    this._list.append(item);
    this._entries.push(entry);
    this._sync();
  }

  private _removeEntry(entry: { item: HTMLElement; field: IField }): void {
    this._entries = this._entries.filter(e => e !== entry);
    entry.item.remove();
    this._sync();
  }

  private _move(entry: { item: HTMLElement; field: IField }): void {
    const i = this._entries.indexOf(entry);
    if (i > 0) {
      const before = this._entries[i - 1];
      this._entries[i - 1] = entry;
      this._entries[i] = before;
      this._list.insertBefore(entry.item, before.item);
    }
  }

  private _sync(): void {
    const s = this._node.schema;
    const n = this._entries.length;
    const full =
      (typeof s.maxItems === 'number' && n >= s.maxItems) ||
      n >= MAX_ENTRIES ||
      (this._tuple && n >= this._prefix.length && s.items === false);
    this._addButton.hidden = full;
    if (this._tuple) {
      this._entries.forEach((e, i) => {
        const last = e.item.querySelector<HTMLElement>('.hitl-f-remove-last');
        if (last) {
          last.hidden = i !== n - 1;
        }
      });
    }
  }

  read(problems: IFieldError[], pointer: string): unknown {
    if (!this._present) {
      return ABSENT;
    }
    return this._entries.map((e, i) => {
      const value = e.field.read(problems, `${pointer}/${i}`);
      if (value === ABSENT) {
        problems.push({
          pointer: `${pointer}/${i}`,
          message: `Entry ${i + 1} is empty`
        });
      }
      return value;
    });
  }

  children(): Array<[string | null, IField]> {
    return this._entries.map((e, i) => [String(i), e.field]);
  }

  setError(message: string | null): void {
    this._box.setError(message);
  }

  focus(): void {
    (this._entries[0]?.field ?? this._box).focus();
  }

  readonly element: HTMLElement;
  readonly label: string;
  private _ctx: Context;
  private _build: Builder;
  private _node: INode;
  private _slot: ISlot;
  private _tuple: boolean;
  private _prefix: unknown[];
  private _box: Box;
  private _list: HTMLElement;
  private _addButton: HTMLButtonElement;
  private _present = false;
  private _entries: Array<{ item: HTMLElement; field: IField }> = [];
}

/** `checkboxes` on a list of choices: one checkbox per value, in the schema's order. */
class CheckboxesField extends Leaf {
  constructor(
    ctx: Context,
    node: INode,
    slot: ISlot,
    initial: unknown,
    values: unknown[]
  ) {
    super(ctx, node, slot, true);
    this._values = values;
    const names = choiceLabels(node.schema, values.length);
    const row = ctx.el('div', 'hitl-f-choices');
    values.forEach((value, i) => {
      const input = ctx.el('input', 'hitl-f-checkbox');
      input.type = 'checkbox';
      input.checked =
        Array.isArray(initial) && initial.some(v => jsonEqual(v, value));
      this.box.control(input, names?.[i] ?? shown(value));
      const option = ctx.el('span', 'hitl-f-choice');
      option.append(input, this.box.takeLabel());
      row.append(option);
      this._boxes.push(input);
    });
    this._present = Array.isArray(initial) || (slot.fresh && slot.required);
    row.addEventListener('change', () => {
      this._present = true;
    });
    this.box.element.append(row);
    this.box.finish();
  }

  read(): unknown {
    if (!this._present) {
      return ABSENT;
    }
    return this._values.filter((_, i) => this._boxes[i].checked).map(copy);
  }

  private _values: unknown[];
  private _boxes: HTMLInputElement[] = [];
  private _present: boolean;
}

const TYPE_WORDS: { [type: string]: string } = {
  string: 'text',
  number: 'number',
  integer: 'whole number',
  boolean: 'yes or no',
  object: 'section',
  array: 'list'
};

/** `oneOf` / `anyOf` / a list of types: a choice of option, then that option's field. */
class VariantField implements IField {
  constructor(
    ctx: Context,
    build: Builder,
    resolver: Resolver,
    node: INode,
    slot: ISlot,
    initial: unknown,
    at: number
  ) {
    this._ctx = ctx;
    this._build = build;
    this._node = node;
    this._slot = slot;
    const s = node.schema;
    this.label = labelOf(s, slot.name) || fallbackLabel(slot);
    this._box = new Box(
      ctx,
      {
        label: this.label,
        help: helpOf(s, hints(s)),
        required: slot.required,
        name: slot.name,
        group: false
      },
      'variant'
    );
    this.element = this._box.element;
    const select = ctx.el(
      'select',
      'hitl-f-input hitl-f-select hitl-f-variant'
    );
    const none = ctx.el('option', '', slot.required ? 'Choose…' : '—');
    none.value = '';
    select.append(none);
    const names = choiceLabels(s, node.options.length);
    node.options.forEach((option, i) => {
      select.append(
        ctx.el(
          'option',
          '',
          names?.[i] ?? optionLabel(option, node.discriminator, i)
        )
      );
      (select.lastChild as HTMLOptionElement).value = String(i);
    });
    this._box.control(select);
    this._select = select;
    this._holder = ctx.el('div', 'hitl-f-option');
    this.element.append(select, this._holder);
    this._box.finish();
    void resolver;
    if (at >= 0) {
      this._choose(at, initial, initial === ABSENT && slot.fresh);
    } else if (initial === ABSENT && slot.fresh && slot.required) {
      this._choose(0, ABSENT, true);
    }
    select.value = this._at < 0 ? '' : String(this._at);
    select.addEventListener('change', () => {
      const next = select.value === '' ? -1 : Number(select.value);
      const before = this._current ? this._current.read([], '') : ABSENT;
      if (next < 0) {
        this._at = -1;
        this._current = null;
        this._holder.textContent = '';
        return;
      }
      const option = this._ctx && node.options[next];
      const keep =
        before !== ABSENT && fitsShape(resolver.classify(option), before);
      this._choose(next, keep ? before : ABSENT, !keep);
      ctx.changed();
    });
  }

  private _choose(at: number, value: unknown, fresh: boolean): void {
    this._at = at;
    this._holder.textContent = '';
    const option = this._node.options[at];
    const titled =
      typeof option.title === 'string'
        ? option
        : { ...option, title: this.label };
    this._current = this._build(this._ctx, {
      schema: titled,
      name: null,
      required: true,
      value,
      fresh,
      depth: this._slot.depth + 1
    });
    this._holder.append(this._current.element);
  }

  read(problems: IFieldError[], pointer: string): unknown {
    return this._current ? this._current.read(problems, pointer) : ABSENT;
  }

  children(): Array<[string | null, IField]> {
    return this._current ? [[null, this._current]] : [];
  }

  setError(message: string | null): void {
    this._box.setError(message);
  }

  focus(): void {
    this._select.focus();
  }

  readonly element: HTMLElement;
  readonly label: string;
  private _ctx: Context;
  private _build: Builder;
  private _node: INode;
  private _slot: ISlot;
  private _box: Box;
  private _select: HTMLSelectElement;
  private _holder: HTMLElement;
  private _at = -1;
  private _current: IField | null = null;
}

function optionLabel(
  option: Schema,
  discriminator: string | null,
  i: number
): string {
  if (typeof option.title === 'string' && option.title.trim()) {
    return option.title;
  }
  if (discriminator && isObject(option.properties)) {
    const sub = option.properties[discriminator];
    if (isObject(sub) && 'const' in sub) {
      return shown(sub.const);
    }
  }
  if (typeof option.type === 'string' && option.type in TYPE_WORDS) {
    return TYPE_WORDS[option.type];
  }
  if ('const' in option) {
    return shown(option.const);
  }
  return `Option ${i + 1}`;
}

/** Whether a field of `node`'s kind can hold `value` (its top level). */
export function fitsShape(node: INode, value: unknown): boolean {
  switch (node.kind) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'enum':
      return (node.schema.enum as unknown[]).some(e => jsonEqual(e, value));
    case 'const':
      return jsonEqual(node.schema.const, value);
    case 'null':
      return value === null;
    case 'object':
      return isObject(value);
    case 'array':
    case 'tuple':
      return Array.isArray(value) && value.length <= MAX_ENTRIES;
    default:
      return true;
  }
}

type Builder = (ctx: Context, slot: ISlot) => IField;

/** The field factory of one form. */
export function builder(resolver: Resolver): Builder {
  const build = (ctx: Context, slot: ISlot): IField => {
    ctx.count += 1;
    const node = resolver.classify(slot.schema);
    const given = slot.value;
    const fresh = slot.fresh && given === ABSENT;
    let initial = given;
    if (fresh && 'default' in node.schema) {
      initial = copy(node.schema.default);
    }
    const json = (note: string): IField =>
      new JsonField(ctx, node, { ...slot, fresh }, initial, note);
    if (ctx.count > MAX_FIELDS) {
      return json('the form has more fields than it draws');
    }
    if (slot.depth > MAX_DEPTH) {
      return json('nested deeper than the form draws');
    }
    if (node.kind === 'json') {
      return json(node.note || 'the form does not draw this part');
    }
    const draw = (value: unknown): IField => {
      const s2 = { ...slot, fresh: fresh && value === ABSENT };
      switch (node.kind) {
        case 'string':
          if (
            typeof node.schema.format === 'string' &&
            ['date', 'time', 'date-time'].includes(node.schema.format) &&
            hints(node.schema).widget !== 'text'
          ) {
            return new DateField(ctx, node, s2, value);
          }
          return new TextField(ctx, node, s2, value);
        case 'number':
        case 'integer':
          return new TextField(ctx, node, s2, value);
        case 'boolean':
          return new BooleanField(ctx, node, s2, value);
        case 'enum':
          return new EnumField(ctx, node, s2, value);
        case 'const':
        case 'null':
          return new FixedField(ctx, node, s2, value);
        case 'object':
          return new ObjectField(ctx, build, node, s2, value);
        case 'array':
        case 'tuple': {
          const choices = checkboxChoices(resolver, node, value);
          if (choices) {
            return new CheckboxesField(ctx, node, s2, value, choices);
          }
          return new ArrayField(ctx, build, node, s2, value);
        }
        case 'variant': {
          let at = -1;
          if (value !== ABSENT) {
            at = pickOption(resolver, node, value);
            if (at < 0) {
              throw new Misfit('no option holds it');
            }
          }
          return new VariantField(ctx, build, resolver, node, s2, value, at);
        }
        default:
          return json('the form does not draw this part');
      }
    };
    const attempt = (value: unknown): IField => {
      if (
        value !== ABSENT &&
        node.kind !== 'variant' &&
        !fitsShape(node, value)
      ) {
        throw new Misfit(
          'the value given is of another type than the schema says'
        );
      }
      return draw(value);
    };
    let field: IField;
    try {
      if (node.nullable) {
        const isNull = initial === null;
        field = new NullableField(
          ctx,
          attempt(isNull ? ABSENT : initial),
          isNull
        );
      } else {
        field = attempt(initial);
      }
    } catch (error) {
      if (error instanceof Misfit) {
        return json(
          node.loose
            ? 'the value given is of a type this field does not draw'
            : `the value given does not fit the field (${error.message})`
        );
      }
      throw error;
    }
    const h = hints(node.schema);
    if (h.widget === 'hidden' || h.hidden === true) {
      field.element.hidden = true;
    }
    if (
      node.schema.readOnly === true ||
      h.readonly === true ||
      h.disabled === true
    ) {
      for (const input of field.element.querySelectorAll(
        'input,select,textarea,button'
      )) {
        (input as HTMLInputElement).disabled = true;
      }
    }
    return field;
  };
  return build;
}

function checkboxChoices(
  resolver: Resolver,
  node: INode,
  value: unknown
): unknown[] | null {
  if (hints(node.schema).widget !== 'checkboxes' || node.kind !== 'array') {
    return null;
  }
  const items = resolver.classify(node.schema.items ?? true);
  if (items.kind !== 'enum') {
    return null;
  }
  const values = items.schema.enum as unknown[];
  if (value !== ABSENT) {
    // held only in the enum's order, each value once
    const picked = values.filter(v =>
      (value as unknown[]).some(w => jsonEqual(v, w))
    );
    if (!jsonEqual(picked, value)) {
      return null;
    }
  }
  return values;
}

/** The option a given value is drawn with: by the discriminator, else the first the
 * value plausibly is an instance of, else the first whose field can hold it. */
function pickOption(resolver: Resolver, node: INode, value: unknown): number {
  const options = node.options;
  if (node.discriminator && isObject(value) && has(value, node.discriminator)) {
    const tag = value[node.discriminator];
    const i = options.findIndex(o => {
      const sub = resolver.resolve(
        (o.properties as Schema)[node.discriminator as string]
      );
      return isObject(sub) && jsonEqual(sub.const, tag);
    });
    if (i >= 0) {
      return i;
    }
  }
  const nodes = options.map(o => resolver.classify(o));
  const i = options.findIndex(
    (o, j) =>
      fitsShape(nodes[j], value) &&
      nodes[j].kind !== 'json' &&
      resolver.accepts(o, value)
  );
  if (i >= 0) {
    return i;
  }
  return nodes.findIndex(n => n.kind !== 'json' && fitsShape(n, value));
}
