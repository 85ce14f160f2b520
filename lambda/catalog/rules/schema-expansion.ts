/**
 * How many times a schema can make Ajv visit one place of a payload. A subschema applied "in
 * place" (JSON Schema 2020-12 Core, section 10.2: allOf, anyOf, oneOf, not, if/then/else,
 * dependentSchemas, and $ref/$dynamicRef, section 8.2.3) is evaluated against the same instance
 * location as the schema holding it, so references that fan out multiply: a chain of 34
 * definitions each referring to the one below twice is 2^34 evaluations of a 3-byte payload.
 * Keywords that descend into the payload (properties, items, ...) evaluate a child location,
 * which the payload's own size bounds, so a recursive schema through them (a tree) is fine.
 *
 * The schema is a graph of subschemas; the in-place edges must be acyclic (a cycle of them never
 * consumes input: Ajv recurses until the stack ends) and the number of in-place paths from any
 * subschema, counted with memoisation, at most MAX_VISITS_PER_LOCATION.
 */

/** Most subschema evaluations a schema may make at one place of a payload (documented in docs/catalog.md). */
export const MAX_VISITS_PER_LOCATION = 10_000;

/** Keywords whose subschemas apply to the same instance location (2020-12 Core, 10.2). */
const IN_PLACE_LIST = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_MAP = ['dependentSchemas'];
/** Keywords whose subschemas apply to a child location (2020-12 Core, 10.3; Unevaluated, 11). */
const DESCEND_ONE = ['items', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const DESCEND_LIST = ['prefixItems'];
const DESCEND_MAP = ['properties', 'patternProperties'];

const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
const isSchema = (v: unknown): v is Record<string, unknown> | boolean => typeof v === 'boolean' || (v !== null && typeof v === 'object' && !Array.isArray(v));

interface Node { path: string; schema: Record<string, unknown> | boolean }

/** The subschema a JSON pointer fragment (`#/a/b`) or an anchor (`#name`) names, or undefined. */
function resolve(root: unknown, ref: string, anchors: Map<string, Node>): Node | undefined {
  if (!ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (fragment !== '' && !fragment.startsWith('/')) return anchors.get(fragment);
  let v: unknown = root;
  for (const part of fragment.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return isSchema(v) ? { path: fragment, schema: v } : undefined;
}

/** Every subschema with its pointer, the anchors ($anchor, $dynamicAnchor) by name. */
function subschemas(root: Record<string, unknown>): { all: Node[]; anchors: Map<string, Node> } {
  const all: Node[] = [];
  const anchors = new Map<string, Node>();
  const walk = (schema: unknown, path: string) => {
    if (!isSchema(schema)) return;
    const node = { path, schema };
    all.push(node);
    if (typeof schema === 'boolean') return;
    for (const a of ['$anchor', '$dynamicAnchor']) if (typeof schema[a] === 'string' && !anchors.has(schema[a] as string)) anchors.set(schema[a] as string, node);
    for (const [k, v] of Object.entries(schema)) {
      const here = `${path}/${esc(k)}`;
      if ([...IN_PLACE_LIST, ...DESCEND_LIST].includes(k) && Array.isArray(v)) v.forEach((s, i) => walk(s, `${here}/${i}`));
      else if ([...IN_PLACE_ONE, ...DESCEND_ONE].includes(k)) walk(v, here);
      else if ([...IN_PLACE_MAP, ...DESCEND_MAP, '$defs', 'definitions'].includes(k) && v && typeof v === 'object') {
        for (const [name, s] of Object.entries(v as Record<string, unknown>)) walk(s, `${here}/${esc(name)}`);
      }
    }
  };
  walk(root, '');
  return { all, anchors };
}

/** The subschemas applied in place by one subschema, with the pointer of the keyword that applies each. */
function inPlace(node: Node, root: Record<string, unknown>, anchors: Map<string, Node>): { via: string; to: Node }[] {
  const s = node.schema;
  if (typeof s === 'boolean') return [];
  const out: { via: string; to: Node }[] = [];
  for (const [k, v] of Object.entries(s)) {
    const here = `${node.path}/${esc(k)}`;
    if (IN_PLACE_LIST.includes(k) && Array.isArray(v)) v.forEach((c, i) => isSchema(c) && out.push({ via: `${here}/${i}`, to: { path: `${here}/${i}`, schema: c } }));
    else if (IN_PLACE_ONE.includes(k) && isSchema(v)) out.push({ via: here, to: { path: here, schema: v } });
    else if (IN_PLACE_MAP.includes(k) && v && typeof v === 'object') {
      for (const [name, c] of Object.entries(v as Record<string, unknown>)) if (isSchema(c)) out.push({ via: `${here}/${esc(name)}`, to: { path: `${here}/${esc(name)}`, schema: c } });
    } else if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string') {
      // Within one document (a nested $id is refused, ../validators.ts) a $dynamicRef resolves to
      // the document's $dynamicAnchor of that name, else like a $ref (2020-12 Core, 8.2.3.2).
      const to = resolve(root, v, anchors);
      if (to) out.push({ via: here, to });
    }
  }
  return out;
}

/**
 * Why the schema could make too many evaluations at one place of a payload, with the JSON
 * pointer of the place in the schema, or undefined. Linear in the schema's size.
 */
export function expansionProblem(root: Record<string, unknown>): string | undefined {
  const { all, anchors } = subschemas(root);
  // Keyed by the subschema object itself: two spellings of a reference to it are one node.
  const visits = new Map<unknown, number>();
  const onPath = new Set<unknown>();
  let problem: string | undefined;
  // Depth-first over in-place edges; the depth is bounded by the schema's size, which
  // ./event-types.ts bounds.
  const count = (node: Node): number => {
    if (typeof node.schema === 'boolean') return 1;
    const known = visits.get(node.schema);
    if (known !== undefined) return known;
    onPath.add(node.schema);
    let n = 1;
    for (const { via, to } of inPlace(node, root, anchors)) {
      if (problem) break;
      if (onPath.has(to.schema)) {
        problem = `${via}: refers to itself at the same place of the payload (to ${to.path || '#'}) without descending into it (properties, items, ...); it would never end`;
        break;
      }
      n += count(to);
      if (n > MAX_VISITS_PER_LOCATION && !problem) {
        problem = `${via}: the schema's references and allOf/anyOf/oneOf could evaluate ${n > 1e15 ? 'more than 10^15' : n} subschemas at one place of the payload, over the bound of ${MAX_VISITS_PER_LOCATION}; refer to shared definitions fewer times`;
      }
    }
    onPath.delete(node.schema);
    visits.set(node.schema, n);
    return n;
  };
  for (const node of all) {
    count(node);
    if (problem) return problem;
  }
  return undefined;
}
