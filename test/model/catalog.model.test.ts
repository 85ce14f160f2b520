/**
 * Schema enforcement (docs/catalog.md) against a reference model, on the local engines: random
 * sequences of event-type creates, patches and deletes on nested names (`m/#`, `m/+`, `m/a`,
 * `m/a/b`) and of single and batch publishes of valid, invalid and non-JSON payloads. The model
 * decides which event type applies by match sets (the name matching the fewest topics of a
 * small universe), independently of the service's specificity rule, and whether each publish
 * must be stored or refused. After every command the queue bound to `m/#` holds exactly the
 * messages the model stored: a refused batch stores none of its messages.
 * FC_SEED / FC_RUNS / FC_COMMANDS replay a failure or run more.
 */
import fc from 'fast-check';
import { topicMatches } from '../../lambda/core/rules/topics';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { modelTimeout, runModel } from './harness';

const DEFAULTS = { runs: 4, maxCommands: 20, seed: 3702 };
jest.setTimeout(modelTimeout(DEFAULTS, 1500, 5000));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const NAMES = ['m/#', 'm/+', 'm/a', 'm/a/b'] as const;
const TOPICS = ['m', 'm/a', 'm/b', 'm/a/b', 'm/b/c'] as const;
type SchemaKind = 'none' | 'needsId' | 'object';
const SCHEMAS: Record<Exclude<SchemaKind, 'none'>, object> = {
  needsId: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
  object: { type: 'object' },
};
const PAYLOADS = ['{"id":1}', '{}', '{"id":"x"}', 'not json', '[1]'] as const;

/** Whether `payload` satisfies the schema kind, decided by hand (not by Ajv). */
function satisfies(kind: Exclude<SchemaKind, 'none'>, payload: string): boolean {
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return false;
  }
  const isObject = v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject) return false;
  if (kind === 'object') return true;
  return Number.isInteger((v as { id?: unknown }).id);
}

interface Model {
  types: Map<string, { schema: SchemaKind; enforce: boolean }>;
  stored: number;
}
interface Real {
  call: ReturnType<typeof client>;
  queue: string;
}

/** The applicable event type by the model: of the matching names, the one matching the fewest topics (the names here nest). */
function applicable(m: Model, topic: string) {
  const universe = ['m', 'm/a', 'm/b', 'm/a/b', 'm/b/c', 'm/a/c', 'm/a/b/c', 'm/x/y/z'];
  const matching = [...m.types.keys()].filter((n) => topicMatches(n, topic));
  matching.sort((a, b) => universe.filter((t) => topicMatches(a, t)).length - universe.filter((t) => topicMatches(b, t)).length);
  return matching.length ? m.types.get(matching[0]) : undefined;
}

const accepted = (m: Model, topic: string, payloads: readonly string[]) => {
  const t = applicable(m, topic);
  if (!t || !t.enforce || t.schema === 'none') return true;
  return payloads.every((p) => satisfies(t.schema as Exclude<SchemaKind, 'none'>, p));
};

async function storedCount(r: Real): Promise<number> {
  const res = await r.call('GET', `/queues/${r.queue}`);
  return res.body.data.message_count as number;
}

const enc = encodeURIComponent;

class SetType implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string, readonly schema: SchemaKind, readonly enforce: boolean) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = { schema: this.schema === 'none' ? null : SCHEMAS[this.schema], enforce: this.enforce };
    const exists = m.types.has(this.name);
    const res = exists ? await r.call('PATCH', `/event-types/${enc(this.name)}`, body) : await r.call('POST', '/event-types', { name: this.name, ...body, schema: body.schema ?? undefined });
    if (this.enforce && this.schema === 'none') {
      expect({ res: res.status, code: res.body.error?.code }).toEqual({ res: 422, code: 'VALIDATION_ERROR' });
      return;
    }
    expect(res.status).toBe(exists ? 200 : 201);
    m.types.set(this.name, { schema: this.schema, enforce: this.enforce });
  }
  toString = () => `set ${this.name} schema=${this.schema} enforce=${this.enforce}`;
}

class DeleteType implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await r.call('DELETE', `/event-types/${enc(this.name)}`);
    expect(res.status).toBe(m.types.has(this.name) ? 200 : 404);
    m.types.delete(this.name);
  }
  toString = () => `delete ${this.name}`;
}

class Publish implements fc.AsyncCommand<Model, Real> {
  constructor(readonly topic: string, readonly payloads: string[], readonly batch: boolean) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = this.batch
      ? await r.call('POST', `/topics/${this.topic}/messages/batch`, { messages: this.payloads.map((payload) => ({ payload })) })
      : await r.call('POST', `/topics/${this.topic}/messages`, { payload: this.payloads[0] });
    if (accepted(m, this.topic, this.payloads)) {
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 201, error: null });
      m.stored += this.payloads.length;
    } else {
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 422, code: 'VALIDATION_ERROR' });
      const t = applicable(m, this.topic) as { schema: Exclude<SchemaKind, 'none'> };
      const failing = this.payloads.map((p, i) => (satisfies(t.schema, p) ? -1 : i)).filter((i) => i >= 0);
      const violations = res.body.error?.details.violations as { index?: number }[];
      expect(violations.map((v) => v.index)).toEqual(this.batch ? failing : [undefined]);
    }
    expect(await storedCount(r)).toBe(m.stored);
  }
  toString = () => `publish${this.batch ? ' batch' : ''} ${this.topic} ${JSON.stringify(this.payloads)}`;
}

const name = fc.constantFrom(...NAMES);
const commands = [
  fc.tuple(name, fc.constantFrom<SchemaKind>('none', 'needsId', 'object'), fc.boolean()).map(([n, s, e]) => new SetType(n, s, e)),
  name.map((n) => new DeleteType(n)),
  fc.tuple(fc.constantFrom(...TOPICS), fc.constantFrom(...PAYLOADS)).map(([t, p]) => new Publish(t, [p], false)),
  fc.tuple(fc.constantFrom(...TOPICS), fc.array(fc.constantFrom(...PAYLOADS), { minLength: 1, maxLength: 5 })).map(([t, ps]) => new Publish(t, ps, true)),
];

it('stores exactly the publishes the applicable enforced schema accepts, and nothing of a refused batch', async () => {
  await runModel(
    'catalog enforcement model',
    DEFAULTS,
    commands,
    async () => {
      const ns = await createTestNamespace('catm');
      const call = client(server.baseUrl, ns.key);
      expect((await call('POST', '/queues', { name: 'all', topic_filter: 'm/#' })).status).toBe(201);
      return { model: { types: new Map(), stored: 0 }, real: { call, queue: 'all' } };
    },
    async (m, r) => {
      expect(await storedCount(r)).toBe(m.stored);
    },
  );
});
