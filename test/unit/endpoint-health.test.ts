/** The pure rules of delivery limits and endpoint health (lambda/webhooks/rules/endpoint-health.ts). */
import { circuitOpen, CIRCUIT_TRIP_ATTEMPTS, effectiveHealth, HEALTH_DEFAULTS, probeHoldMs, shouldDisable, waitSeconds, webhookStatusOf } from '../../lambda/webhooks/rules/endpoint-health';

describe('webhookStatusOf', () => {
  it('says active, failing, disabled by user or by health', () => {
    expect(webhookStatusOf({ enabled: true }, undefined)).toEqual({ status: 'active', disabled_reason: null, disabled_at: null });
    expect(webhookStatusOf({ enabled: true }, { failing_since: 5 })).toMatchObject({ status: 'failing', disabled_reason: null });
    expect(webhookStatusOf({ enabled: false }, undefined)).toEqual({ status: 'disabled', disabled_reason: 'user', disabled_at: null });
    expect(webhookStatusOf({ enabled: false }, { failing_since: 5, disabled_at: 9 })).toEqual({ status: 'disabled', disabled_reason: 'health', disabled_at: 9 });
    expect(webhookStatusOf({ enabled: true }, { failing_since: 5, disabled_at: 9 })).toMatchObject({ status: 'disabled', disabled_reason: 'health' });
  });
});

describe('circuitOpen', () => {
  it('opens after a run of CIRCUIT_TRIP_ATTEMPTS failed attempts, not on one transient failure', () => {
    expect(circuitOpen(undefined)).toBe(false);
    expect(circuitOpen({ failing_since: 1, failed_attempts: 1 })).toBe(false);
    expect(circuitOpen({ failing_since: 1, failed_attempts: CIRCUIT_TRIP_ATTEMPTS - 1 })).toBe(false);
    expect(circuitOpen({ failing_since: 1, failed_attempts: CIRCUIT_TRIP_ATTEMPTS })).toBe(true);
    // Health written before attempts were counted keeps its circuit open.
    expect(circuitOpen({ failing_since: 1 })).toBe(true);
  });
});

describe('effectiveHealth (namespace defaults)', () => {
  it('takes the webhook\'s own threshold, else its namespace\'s, else the default, and says which', () => {
    expect(effectiveHealth({}, {})).toEqual({ failure_threshold: { value: 100, source: 'default' }, disable_after: { value: 432000, source: 'default' } });
    expect(effectiveHealth({}, { failure_threshold: 10 })).toEqual({ failure_threshold: { value: 10, source: 'namespace' }, disable_after: { value: 432000, source: 'default' } });
    expect(effectiveHealth({ failure_threshold: 3, disable_after: 60 }, { failure_threshold: 10, disable_after: 120 })).toEqual({ failure_threshold: { value: 3, source: 'webhook' }, disable_after: { value: 60, source: 'webhook' } });
    expect(effectiveHealth({ failure_threshold: 3 }, { disable_after: 120 }).disable_after).toEqual({ value: 120, source: 'namespace' });
  });

  it('shouldDisable applies the namespace\'s thresholds where the webhook sets none', () => {
    expect(shouldDisable({}, { failing_since: 0, failures: 2 }, 1, { failure_threshold: 2 })).toBe(true);
    expect(shouldDisable({}, { failing_since: 0, failures: 1 }, 1, { failure_threshold: 2 })).toBe(false);
    expect(shouldDisable({ failure_threshold: 5 }, { failing_since: 0, failures: 2 }, 1, { failure_threshold: 2 })).toBe(false);
    expect(shouldDisable({}, { failing_since: 0, failures: 1 }, 60_000, { disable_after: 60 })).toBe(true);
    expect(shouldDisable({ disable_after: 120 }, { failing_since: 0, failures: 1 }, 60_000, { disable_after: 60 })).toBe(false);
  });
});

describe('shouldDisable', () => {
  it('disables after failure_threshold failed deliveries, or disable_after seconds of failure with at least one', () => {
    expect(shouldDisable({ failure_threshold: 3 }, { failing_since: 0, failures: 2 }, 1000)).toBe(false);
    expect(shouldDisable({ failure_threshold: 3 }, { failing_since: 0, failures: 3 }, 1000)).toBe(true);
    expect(shouldDisable({ disable_after: 60 }, { failing_since: 0, failures: 1 }, 59_999)).toBe(false);
    expect(shouldDisable({ disable_after: 60 }, { failing_since: 0, failures: 1 }, 60_000)).toBe(true);
    expect(shouldDisable({ disable_after: 60 }, { failing_since: 0, failures: 0 }, 10_000_000)).toBe(false);
    expect(shouldDisable({}, { failing_since: 0, failures: HEALTH_DEFAULTS.failure_threshold }, 1)).toBe(true);
    expect(shouldDisable({}, { failing_since: 0, failures: 1 }, HEALTH_DEFAULTS.disable_after * 1000)).toBe(true);
  });
});

describe('probe hold and waits', () => {
  it('holds a probe for its timeout plus a doubling gap of at most 60 s', () => {
    expect(probeHoldMs(10, 0)).toBe(11_000);
    expect(probeHoldMs(0, 3)).toBe(8000);
    expect(probeHoldMs(0, 40)).toBe(60_000);
  });
  it('waits at least 1 s and at most 900 s', () => {
    expect(waitSeconds(0, 1000)).toBe(1);
    expect(waitSeconds(3500, 1000)).toBe(3);
    expect(waitSeconds(10_000_000, 0)).toBe(900);
  });
});
