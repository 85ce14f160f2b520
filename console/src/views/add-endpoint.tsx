/**
 * Adding an endpoint in the portal: a URL and the events to receive, picked from the namespace's
 * event catalog (GET /event-types: name, description, an example). Where the service has no
 * catalog (that route answers 404) or it is empty, the events are a topic filter typed in.
 */
import { useState } from 'preact/hooks';
import { ApiError, unwrap, type Schemas, type Session } from '../api';
import { href } from '../router';
import { ActionButton, Field, formValues, Notice, useAction, useLoad } from '../ui';

type EventType = Schemas['EventType'];

/**
 * The catalog through the session's typed client, page by page: the service cuts a page to what
 * one response carries and echoes as `limit` the items it holds. A deployment without a catalog
 * answers 404.
 */
async function catalog(session: Session): Promise<EventType[] | undefined> {
  try {
    const all: EventType[] = [];
    for (let offset = 0; ; ) {
      const page = unwrap(await session.api.GET('/event-types', { params: { query: { limit: 100, offset } } }));
      all.push(...page.event_types);
      offset += page.event_types.length;
      if (page.event_types.length === 0 || offset >= page.total) return all;
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

const example = (t: EventType | undefined) => {
  const e = t?.examples?.[0];
  return e === undefined ? undefined : typeof e === 'string' ? e : JSON.stringify(e);
};

export function AddEndpoint({ session }: { session: Session & { token?: string } }) {
  const types = useLoad(() => catalog(session), []);
  const [picked, setPicked] = useState<string>();
  const [secret, setSecret] = useState<string>();
  const add = useAction();
  const list = types.data && types.data.length > 0 ? types.data : undefined;
  const chosen = list?.find((t) => t.name === (picked ?? list[0].name));
  return (
    <section aria-labelledby="add-endpoint">
      <h2 id="add-endpoint">Add an endpoint</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          setSecret(undefined);
          void add.run(async () => {
            const w = unwrap(await session.api.POST('/webhooks', { body: { name: v.name, url: v.url, topic_filter: v.topic_filter } }));
            setSecret(w.secret);
            return `Added ${w.name}.`;
          });
        }}
      >
        <Field label="Name" hint="letters, digits, . _ -">
          <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,127}" />
        </Field>
        <Field label="URL" hint="where the events are sent (http or https)">
          <input name="url" type="url" required />
        </Field>
        {list ? (
          <>
            <Field label="Events" hint="from the event catalog">
              <select name="topic_filter" onChange={(e) => setPicked((e.currentTarget as HTMLSelectElement).value)}>
                {list.map((t) => (
                  <option key={t.name} value={t.name}>
                    {t.name}
                  </option>
                ))}
              </select>
            </Field>
            {chosen?.description && <p data-testid="event-description">{chosen.description}</p>}
            {example(chosen) && (
              <pre data-testid="event-example">
                <code>{example(chosen)}</code>
              </pre>
            )}
          </>
        ) : (
          <Field label="Events (topic filter)" hint="e.g. orders/# for every orders event">
            <input name="topic_filter" required />
          </Field>
        )}
        <ActionButton session={session} scope="manage" type="submit" busy={add.busy}>
          Add endpoint
        </ActionButton>
        {types.error && <p class="not-allowed">The event catalog could not be read ({types.error}); type a topic filter.</p>}
        <Notice ok={add.ok} error={add.error} />
      </form>
      {secret && (
        <div class="secret" role="status">
          <p>
            Signing secret, shown once: <code data-testid="new-secret">{secret}</code>
          </p>
          <p>
            Verify each delivery's <code>webhook-signature</code> with it. <a href={href('webhooks')}>Back to your endpoints</a>
          </p>
        </div>
      )}
    </section>
  );
}
