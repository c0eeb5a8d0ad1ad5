/**
 * A response_schema read the way the form draws it: local `$ref`s resolved, `allOf`
 * merged, drafts 04 to 2019-09 read as 2020-12, and each node classified into the kind
 * of field that draws it (the same kinds as the Python forms, `hitl_nb/forms/_normalize.py`:
 * string, number, integer, boolean, enum, const, null, object, array, tuple, variant,
 * json). Nothing is fetched: a `$ref` that is not a pointer into the schema itself (or
 * one by the root's own `$id`) makes its subtree a JSON editor. The caller's schema is
 * never modified.
 */

export type Schema = { [key: string]: unknown };

export type Kind =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'enum'
  | 'const'
  | 'null'
  | 'object'
  | 'array'
  | 'tuple'
  | 'variant'
  | 'json';

/** A resolved schema and the kind of field that draws it. */
export interface INode {
  kind: Kind;
  schema: Schema;
  /** `null` is allowed besides the kind (a "None" checkbox). */
  nullable: boolean;
  /** A variant's options (resolved, with the shared keywords merged in). */
  options: Schema[];
  /** The property whose `const` tells the options apart, if there is one. */
  discriminator: string | null;
  /** Why a subtree is a JSON editor (plain words). */
  note: string;
  /** The schema names no `type`: values of other types are valid too. */
  loose: boolean;
}

export class Unsupported extends Error {}

/** Marks the option of an any-value schema that holds a list or an object as JSON. */
export const STRUCTURED = 'x-hitl-structured';
const CONDITIONS = 'x-hitl-conditions';
const UNDRAWN = ['$dynamicRef', '$recursiveRef'];
const MIN_KEYS = [
  'minimum',
  'exclusiveMinimum',
  'minLength',
  'minItems',
  'minProperties'
];
const MAX_KEYS = [
  'maximum',
  'exclusiveMaximum',
  'maxLength',
  'maxItems',
  'maxProperties'
];

export function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON equality (key order aside). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a)) {
    return (
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => jsonEqual(x, b[i]))
    );
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every(
        k => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k])
      )
    );
  }
  return false;
}

/** `items` as a list (drafts 04-2019-09) is `prefixItems`; `dependencies` are
 * `dependentRequired` and conditions. A new object; the validator reads the original. */
function upgrade(schema: Schema): Schema {
  let out = schema;
  if (Array.isArray(out.items) || 'additionalItems' in out) {
    out = { ...out };
    const extra = 'additionalItems' in out ? out.additionalItems : true;
    delete out.additionalItems;
    if (Array.isArray(out.items)) {
      out.prefixItems = out.items;
      delete out.items;
      if (extra !== true) {
        out.items = extra;
      }
    }
  }
  for (const key of ['dependencies', 'dependentSchemas']) {
    const deps = out[key];
    if (!isObject(deps)) {
      continue;
    }
    out = { ...out };
    delete out[key];
    const required: Schema = { ...((out.dependentRequired as Schema) ?? {}) };
    const conditions = [...((out[CONDITIONS] as unknown[]) ?? [])];
    for (const [name, dep] of Object.entries(deps)) {
      if (Array.isArray(dep)) {
        required[name] = [
          ...((required[name] as unknown[]) ?? []),
          ...(dep as unknown[])
        ];
      } else if (isObject(dep) || typeof dep === 'boolean') {
        conditions.push({ if: { required: [name] }, then: dep, else: true });
      }
    }
    if (Object.keys(required).length) {
      out.dependentRequired = required;
    }
    if (conditions.length) {
      out[CONDITIONS] = conditions;
    }
  }
  return out;
}

function liftConditions(schema: Schema): Schema {
  const out = { ...schema };
  if (!('if' in out || 'then' in out || 'else' in out)) {
    return out;
  }
  const cond = out.if;
  const then = 'then' in out ? out.then : true;
  const other = 'else' in out ? out.else : true;
  delete out.if;
  delete out.then;
  delete out.else;
  if ('if' in schema) {
    out[CONDITIONS] = [
      ...((out[CONDITIONS] as unknown[]) ?? []),
      { if: cond, then, else: other }
    ];
  }
  return out;
}

function mergeTypes(a: unknown, b: unknown): unknown {
  const la = typeof a === 'string' ? [a] : Array.isArray(a) ? a : [];
  const lb = typeof b === 'string' ? [b] : Array.isArray(b) ? b : [];
  const both = la.filter(
    t => lb.includes(t) || (t === 'number' && lb.includes('integer'))
  );
  for (const t of lb) {
    if (t === 'integer' && la.includes('number') && !both.includes(t)) {
      both.push(t);
    }
  }
  const unique = both.filter(
    t => !(t === 'number' && both.includes('integer'))
  );
  if (!unique.length) {
    throw new Unsupported('allOf asks for two types that no value has');
  }
  return unique.length === 1 ? unique[0] : unique;
}

/** Schema `b` merged into `a` as `allOf: [a, b]` constrains (a new object); `a`'s
 * annotations win. What cannot be merged the gateway's validator still checks. */
export function merge(a: Schema, b: Schema): Schema {
  const out = liftConditions(a);
  for (const [key, vb] of Object.entries(liftConditions(b))) {
    if (!(key in out)) {
      out[key] = vb;
      continue;
    }
    const va = out[key];
    if (jsonEqual(va, vb)) {
      continue;
    }
    if (key === 'properties' && isObject(va) && isObject(vb)) {
      const props: Schema = { ...va };
      for (const [name, sub] of Object.entries(vb)) {
        props[name] = name in props ? { allOf: [props[name], sub] } : sub;
      }
      out[key] = props;
    } else if (key === 'required' && Array.isArray(va) && Array.isArray(vb)) {
      out[key] = [
        ...(va as unknown[]),
        ...(vb as unknown[]).filter(r => !(va as unknown[]).includes(r))
      ];
    } else if (key === 'type') {
      out[key] = mergeTypes(va, vb);
    } else if (key === 'enum' && Array.isArray(va) && Array.isArray(vb)) {
      out[key] = va.filter(v => vb.some(w => jsonEqual(v, w)));
    } else if (key === 'const') {
      throw new Unsupported('allOf asks for two different constant values');
    } else if (
      MIN_KEYS.includes(key) &&
      typeof va === 'number' &&
      typeof vb === 'number'
    ) {
      out[key] = Math.max(va, vb);
    } else if (
      MAX_KEYS.includes(key) &&
      typeof va === 'number' &&
      typeof vb === 'number'
    ) {
      out[key] = Math.min(va, vb);
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = { allOf: [va, vb] };
    } else if (
      (key === '$defs' || key === 'definitions') &&
      isObject(va) &&
      isObject(vb)
    ) {
      out[key] = { ...vb, ...va };
    } else if (key === 'dependentRequired' && isObject(va) && isObject(vb)) {
      out[key] = { ...vb, ...va };
    } else if (key === CONDITIONS && Array.isArray(va) && Array.isArray(vb)) {
      out[key] = [...(va as unknown[]), ...(vb as unknown[])];
    } else if (key === 'oneOf' || key === 'anyOf') {
      throw new Unsupported(
        'allOf combines several oneOf/anyOf: not drawn as fields'
      );
    }
  }
  return out;
}

function splitPointer(pointer: string): string[] {
  if (pointer === '') {
    return [];
  }
  return pointer
    .slice(1)
    .split('/')
    .map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The members the conditions of `schema` (`if`/`then`/`else`, `dependentSchemas`)
 * may add: drawn as optional members besides its `properties`. */
export function conditionalProperties(schema: Schema): Schema {
  const out: Schema = {};
  const conditions = schema[CONDITIONS];
  for (const c of Array.isArray(conditions) ? conditions : []) {
    const cond: Schema = isObject(c) ? c : {};
    for (const branch of [cond.then, cond.else]) {
      if (isObject(branch) && isObject(branch.properties)) {
        for (const [name, sub] of Object.entries(branch.properties)) {
          if (!(name in out)) {
            out[name] = sub;
          }
        }
      }
    }
  }
  return out;
}

const ANNOTATIONS = ['title', 'description', 'default', 'examples'];

function annotationsDropped(schema: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (!ANNOTATIONS.includes(k) && !k.startsWith('x-ui-')) {
      out[k] = v;
    }
  }
  return out;
}

function inferType(s: Schema): string | null {
  const has = (keys: string[]): boolean => keys.some(k => k in s);
  if (
    has([
      'properties',
      'additionalProperties',
      'patternProperties',
      'required',
      'dependentRequired',
      'minProperties',
      'maxProperties'
    ])
  ) {
    return 'object';
  }
  if (has(['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems'])) {
    return 'array';
  }
  if (has(['minLength', 'maxLength', 'pattern', 'format'])) {
    return 'string';
  }
  if (
    has([
      'minimum',
      'maximum',
      'exclusiveMinimum',
      'exclusiveMaximum',
      'multipleOf'
    ])
  ) {
    return 'number';
  }
  return null;
}

const SIMPLE: { [type: string]: Kind } = {
  string: 'string',
  number: 'number',
  integer: 'integer',
  boolean: 'boolean',
  null: 'null'
};

/** The options of a schema that allows any value. */
const ANY_OPTIONS: Schema[] = [
  { type: 'string' },
  { type: 'number' },
  { type: 'boolean' },
  { title: 'list or object', [STRUCTURED]: true }
];

function node(kind: Kind, schema: Schema, extra: Partial<INode> = {}): INode {
  return {
    kind,
    schema,
    nullable: false,
    options: [],
    discriminator: null,
    note: '',
    loose: false,
    ...extra
  };
}

/** Resolves and classifies the schemas of one form (local references only). */
export class Resolver {
  constructor(readonly root: unknown) {}

  /** The subschema a local `$ref` names. */
  deref(ref: unknown): unknown {
    let target = ref;
    if (typeof target === 'string' && !target.startsWith('#')) {
      target = this._own(target);
    }
    if (
      typeof target !== 'string' ||
      !(target === '#' || target.startsWith('#/'))
    ) {
      throw new Unsupported(
        `the reference ${JSON.stringify(ref)} points outside this schema`
      );
    }
    let at: unknown = this.root;
    let fragment = target.slice(1);
    try {
      fragment = decodeURIComponent(fragment);
    } catch {
      // kept as written
    }
    for (const segment of splitPointer(fragment)) {
      if (isObject(at) && segment in at) {
        at = at[segment];
      } else if (
        Array.isArray(at) &&
        /^\d+$/.test(segment) &&
        +segment < at.length
      ) {
        at = at[+segment];
      } else {
        throw new Unsupported(
          `the reference ${JSON.stringify(ref)} points at nothing`
        );
      }
    }
    return at;
  }

  private _own(ref: string): string {
    const root = this.root;
    const base = isObject(root) ? (root.$id ?? root.id) : undefined;
    if (typeof base !== 'string') {
      return ref;
    }
    try {
      const url = new URL(ref, base);
      const own = new URL(base);
      const fragment = url.hash;
      url.hash = '';
      own.hash = '';
      return url.href === own.href
        ? '#' + decodeURIComponent(fragment.slice(1))
        : ref;
    } catch {
      return ref;
    }
  }

  /** `schema` with its `$ref` and `allOf` folded in (a new object). */
  resolve(schema: unknown, chain: string[] = []): unknown {
    if (!isObject(schema)) {
      return schema;
    }
    if (chain.length > 32) {
      throw new Unsupported('the references go too deep');
    }
    let out = upgrade(liftConditions(schema));
    const ref = out.$ref;
    if (ref !== undefined) {
      delete out.$ref;
      const key = JSON.stringify(ref);
      if (chain.includes(key)) {
        throw new Unsupported('the schema refers to itself here');
      }
      const target = this.resolve(this.deref(ref), [...chain, key]);
      if (target === false) {
        throw new Unsupported('the reference allows no value');
      }
      if (isObject(target)) {
        out = merge(out, target);
      }
    }
    const members = out.allOf;
    if (Array.isArray(members)) {
      delete out.allOf;
      for (const member of members) {
        const resolved = this.resolve(member, chain);
        if (resolved === false) {
          throw new Unsupported('allOf has a member that allows no value');
        }
        if (isObject(resolved)) {
          out = merge(out, resolved);
        }
      }
    }
    return out;
  }

  /** Resolve `schema` and decide which kind of field draws it. */
  classify(schema: unknown, depth = 0): INode {
    try {
      return this._classify(schema, depth);
    } catch (error) {
      if (error instanceof Unsupported) {
        return node('json', isObject(schema) ? schema : {}, {
          note: error.message
        });
      }
      throw error;
    }
  }

  private _classify(schema: unknown, depth: number): INode {
    if (depth > 32) {
      throw new Unsupported('the choices refer back to themselves');
    }
    if (schema === true) {
      return this._any({});
    }
    if (schema === false) {
      throw new Unsupported('the schema allows no value here');
    }
    if (!isObject(schema)) {
      throw new Unsupported('this part of the schema is not a schema');
    }
    const s = this.resolve(schema) as Schema;
    if (s[STRUCTURED] === true) {
      return node('json', s, {
        note: 'a list or an object, of values of any type'
      });
    }
    for (const key of UNDRAWN) {
      if (key in s) {
        throw new Unsupported(`${key} is not followed by the form`);
      }
    }
    if ('const' in s) {
      return node('const', s);
    }
    if (Array.isArray(s.enum)) {
      if (!s.enum.length) {
        throw new Unsupported('an empty list of choices allows no value');
      }
      return node('enum', s);
    }
    for (const key of ['oneOf', 'anyOf']) {
      const options = s[key];
      if (Array.isArray(options) && options.length) {
        return this._variants(s, key, depth);
      }
    }
    const types = s.type;
    if (Array.isArray(types)) {
      const rest = types.filter(t => t !== 'null');
      const nullable = rest.length < types.length;
      if (!rest.length) {
        return node('null', s);
      }
      if (rest.length === 1) {
        const one = this._byType({ ...s, type: rest[0] });
        one.nullable = nullable;
        return one;
      }
      const options = rest.map((t: unknown) => ({
        ...annotationsDropped(s),
        type: t
      }));
      return node('variant', s, { nullable, options });
    }
    return this._byType(s);
  }

  private _byType(s: Schema): INode {
    let t = s.type;
    const loose = t === undefined;
    if (loose) {
      t = inferType(s);
    }
    let out: INode;
    if (t === 'object') {
      out = node('object', s);
    } else if (t === 'array') {
      out = node(Array.isArray(s.prefixItems) ? 'tuple' : 'array', s);
    } else if (typeof t === 'string' && t in SIMPLE) {
      out = node(SIMPLE[t], s);
    } else if (t === null) {
      return this._any(s);
    } else {
      throw new Unsupported(`${JSON.stringify(t)} is not a JSON Schema type`);
    }
    out.loose = loose;
    return out;
  }

  private _any(s: Schema): INode {
    const base = annotationsDropped(s);
    return node('variant', s, {
      nullable: true,
      options: ANY_OPTIONS.map(o => ({ ...base, ...o }))
    });
  }

  private _variants(s: Schema, key: string, depth: number): INode {
    const base: Schema = { ...s };
    delete base.oneOf;
    delete base.anyOf;
    const options: Schema[] = [];
    let nullable = false;
    for (const raw of s[key] as unknown[]) {
      let option = this.resolve(raw);
      if (option === false) {
        continue;
      }
      if (option === true) {
        option = {};
      }
      if (!isObject(option)) {
        throw new Unsupported('a choice is not a schema');
      }
      if (
        option.type === 'null' ||
        ('const' in option && option.const === null)
      ) {
        nullable = true;
        continue;
      }
      options.push(merge(annotationsDropped(base), option));
    }
    if (!options.length) {
      return node('null', base);
    }
    if (options.length === 1) {
      const one = this._classify(merge(base, options[0]), depth + 1);
      one.nullable = one.nullable || nullable;
      return one;
    }
    return node('variant', s, {
      nullable,
      options,
      discriminator: this._discriminator(options)
    });
  }

  private _discriminator(options: Schema[]): string | null {
    const first = options[0].properties;
    if (!isObject(first)) {
      return null;
    }
    for (const name of Object.keys(first)) {
      const seen: unknown[] = [];
      const all = options.every(option => {
        const props = option.properties;
        if (!isObject(props) || !(name in props)) {
          return false;
        }
        let sub: unknown;
        try {
          sub = this.resolve(props[name]);
        } catch {
          return false;
        }
        if (
          !isObject(sub) ||
          !('const' in sub) ||
          seen.some(v => jsonEqual(v, sub.const))
        ) {
          return false;
        }
        seen.push(sub.const);
        return true;
      });
      if (all) {
        return name;
      }
    }
    return null;
  }

  /** Whether `value` plausibly is an instance of `schema` (types, consts, enums,
   * required members, bounds: enough to pick a variant's option; the gateway's
   * validator is the judge). */
  accepts(schema: unknown, value: unknown, depth = 0): boolean {
    if (depth > 16 || schema === true || schema === undefined) {
      return true;
    }
    if (schema === false) {
      return false;
    }
    let s: Schema;
    try {
      const resolved = this.resolve(schema);
      if (typeof resolved === 'boolean') {
        return resolved;
      }
      if (!isObject(resolved)) {
        return true;
      }
      s = resolved;
    } catch {
      return true;
    }
    if ('const' in s && !jsonEqual(s.const, value)) {
      return false;
    }
    if (Array.isArray(s.enum) && !s.enum.some(e => jsonEqual(e, value))) {
      return false;
    }
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some(t => typeOk(String(t), value))) {
        return false;
      }
    }
    for (const key of ['oneOf', 'anyOf']) {
      const options = s[key];
      if (
        Array.isArray(options) &&
        !options.some(o => this.accepts(o, value, depth + 1))
      ) {
        return false;
      }
    }
    if (typeof value === 'string') {
      if (
        typeof s.minLength === 'number' &&
        Array.from(value).length < s.minLength
      ) {
        return false;
      }
      if (
        typeof s.maxLength === 'number' &&
        Array.from(value).length > s.maxLength
      ) {
        return false;
      }
      if (typeof s.pattern === 'string') {
        try {
          if (!new RegExp(s.pattern, 'u').test(value)) {
            return false;
          }
        } catch {
          // a pattern JavaScript cannot read: the validator decides
        }
      }
    }
    if (typeof value === 'number') {
      if (typeof s.minimum === 'number' && value < s.minimum) {
        return false;
      }
      if (typeof s.maximum === 'number' && value > s.maximum) {
        return false;
      }
    }
    if (isObject(value)) {
      if (
        Array.isArray(s.required) &&
        s.required.some(r => !(String(r) in value))
      ) {
        return false;
      }
      const props = isObject(s.properties) ? s.properties : {};
      for (const [name, member] of Object.entries(value)) {
        if (name in props) {
          if (!this.accepts(props[name], member, depth + 1)) {
            return false;
          }
        } else if (
          s.additionalProperties === false &&
          !isObject(s.patternProperties)
        ) {
          return false;
        } else if (
          isObject(s.additionalProperties) &&
          !isObject(s.patternProperties)
        ) {
          if (!this.accepts(s.additionalProperties, member, depth + 1)) {
            return false;
          }
        }
      }
    }
    if (Array.isArray(value)) {
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      for (let i = 0; i < value.length; i++) {
        const sub: unknown = i < prefix.length ? prefix[i] : s.items;
        if (!this.accepts(sub, value[i], depth + 1)) {
          return false;
        }
      }
      if (typeof s.minItems === 'number' && value.length < s.minItems) {
        return false;
      }
      if (typeof s.maxItems === 'number' && value.length > s.maxItems) {
        return false;
      }
    }
    return true;
  }
}

function typeOk(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return false;
  }
}
