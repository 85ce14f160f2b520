/**
 * The local retry workflow counts Step Functions transitions as Standard workflows bill them
 * (every state entered, every Task retry): the bench prices a dead endpoint's way to disabled
 * with the count, and the cost model assumes 4 transitions for a delivery retried once.
 */
import type { RetryState } from '../../lambda/domain/delivery';
import type { AttemptEvent } from '../../lambda/handlers/webhook-attempt';
import { LocalRetryWorkflow } from '../../local/stepfunctions';

// Each run waits up to 20 s for the workflow to end; the first also loads the ASL engine, which
// took more than jest's default 5 s on a loaded 2-core machine.
jest.setTimeout(30_000);

const state = (): RetryState => ({
  job: { namespace: 'acme', webhook_id: 'id-w', webhook_name: 'w', message: { message_id: 'M', topic: 't', payload: 'p', content_type: 'text/plain', properties: {}, published_at: 0, size: 1 } },
  attempts: 1,
  wait_seconds: 0,
  last_error: 'HTTP 500',
  outcome: 'retry',
});

async function run(act: (e: AttemptEvent) => Promise<RetryState>): Promise<number> {
  // A status event (a failed execution) never comes here: these executions do not fail.
  const wf = new LocalRetryWorkflow(async (e) => ('state' in e ? act(e) : undefined));
  await wf.start('x', state());
  const deadline = Date.now() + 20_000;
  while (wf.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 20));
  await wf.stop();
  return wf.transitions;
}

describe('local retry workflow transitions', () => {
  it('counts Wait, Attempt, Decide, Finish for a retry that succeeds without a wait', async () => {
    expect(await run(async (e) => (e.action === 'attempt' ? { ...e.state, outcome: 'success' } : e.state))).toBe(4);
  });

  it('counts a Wait, and each further round of a delivery that keeps failing', async () => {
    let attempts = 0;
    const act = async (e: AttemptEvent): Promise<RetryState> => {
      if (e.action !== 'attempt') return e.state;
      attempts++;
      // The first retry fails and asks for a 1 s wait; the second ends the delivery as failed.
      if (attempts === 1) return { ...e.state, attempts: 2, wait_seconds: 1, outcome: 'retry' };
      return { ...e.state, attempts: 3, outcome: 'failed' };
    };
    // Wait, Attempt, Decide, Wait, Attempt, Decide, Finish.
    expect(await run(act)).toBe(7);
  });
});
