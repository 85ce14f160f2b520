/**
 * What console.test.ts's browser tests share that is not a test: reading the page (text by test
 * id, waiting for a text or for a view to load, walking the focus with Tab), the webhook receiver
 * whose answer a test switches, and the figures of docs/console.md written from the measurements.
 */
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { today, writeSection } from '../../bench/figures';

/** The bits of the page's window the evaluated functions use (this project compiles without the DOM lib). */
export interface Win {
  document: { querySelector(selector: string): { textContent: string | null } | null };
  navigator: { clipboard: { readText(): Promise<string> } };
}

export const text = (page: Page, testId: string) => page.getByTestId(testId).textContent();

export async function waitForText(page: Page, testId: string, want: string, timeout = 30_000) {
  await page.waitForFunction(([id, v]) => (globalThis as unknown as Win).document.querySelector(`[data-testid="${id}"]`)?.textContent === v, [testId, want] as const, { timeout });
}

/** Waits until the view has loaded (no "Loading…" left). */
export async function settled(page: Page) {
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => !(globalThis as unknown as Win).document.querySelector('[aria-busy="true"]'), undefined, { timeout: 30_000 });
}

/** The focused element as the test sees it: tag, text, accessible label, and whether its focus ring shows. */
interface Focused {
  tag: string;
  text: string;
  label: string;
  name: string;
  ring: boolean;
}

/**
 * Presses Tab (or Shift+Tab) until the focused element matches, at most 80 times; answers it.
 * Focus must be visible all the way: a focus ring (the :focus-visible outline) on every stop.
 */
export async function tabTo(page: Page, want: (f: Focused) => boolean, what: string, back = false): Promise<Focused> {
  const seen: string[] = [];
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const f = await page.evaluate(() => {
      const g = globalThis as unknown as { document: { activeElement: any }; getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string } };
      const e = g.document.activeElement;
      if (!e || e === (g.document as any).body) return undefined;
      const st = g.getComputedStyle(e);
      return {
        tag: String(e.tagName).toLowerCase(),
        text: String(e.textContent ?? '').trim(),
        label: String(e.getAttribute('aria-label') ?? ''),
        name: String(e.getAttribute('name') ?? ''),
        ring: Boolean(e.matches(':focus-visible')) && st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) > 0,
      };
    });
    // No element, or the view's main region: the console moves the focus there when a view opens
    // (tabindex -1, not a Tab stop). On a loaded machine that move can land between two presses.
    if (!f || f.tag === 'main') continue;
    seen.push(`${f.tag}:${f.label || f.name || f.text.slice(0, 20)}`);
    expect({ at: seen[seen.length - 1], ring: f.ring }).toEqual({ at: seen[seen.length - 1], ring: true });
    if (want(f)) return f;
  }
  throw new Error(`Tab never reached ${what}; stops: ${seen.join(' | ')}`);
}

/** A webhook receiver whose answer the test switches (`status`, 500 until fixed), counting requests. */
export interface SwitchableReceiver {
  url: string;
  status: number;
  received: number;
  close(): Promise<void>;
}

export async function startSwitchableReceiver(): Promise<SwitchableReceiver> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receiver.received++;
      res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const receiver: SwitchableReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    status: 500,
    received: 0,
    close: () => new Promise((res) => server.close(() => res())),
  };
  return receiver;
}

/**
 * Stores the measurements as the `console` section of docs/figures.json, which docs/console.md
 * shows (bench/figures.ts): with MSG_WRITE_FIGURES=1 only.
 */
export function writeConsoleFigures(measured: Record<string, unknown>, jsGzipBytes: number) {
  const load = measured.first_load_ms as { p50: number; max: number };
  const axe = measured.axe as Record<string, unknown[]>;
  const findings = Object.values(axe).reduce((n, v) => n + v.length, 0);
  writeSection('console', {
    command: 'MSG_WRITE_FIGURES=1 npx jest test/browser',
    measured: today(),
    environment: "Debian's chromium, headless, through playwright-core, against npm start on the same 2-core machine",
    source: 'test/browser/console-fixture.ts',
    markdown: [
      '| what | measured |',
      '|---|---:|',
      `| console JavaScript, gzipped (the build fails above 150 KB) | ${(jsGzipBytes / 1024).toFixed(1)} KB |`,
      `| first load of /console/ to the sign-in form, p50 of 10 (max) | ${Math.round(load.p50)} ms (${Math.round(load.max)} ms) |`,
      `| axe-core findings of any impact on ${Object.keys(axe).length} views | ${findings} |`,
      `| the browser tests' run time, starting the local runtime included | ${Math.round((measured.run_ms as number) / 1000)} s |`,
    ].join('\n'),
  });
}

/**
 * Stores the portal's measurements as the `portal` section of docs/figures.json, which
 * docs/portal.md shows: with MSG_WRITE_FIGURES=1 only. The portal is the console's build, so its
 * JavaScript is the console's.
 */
export function writePortalFigures(measured: Record<string, unknown>, jsGzipBytes: number) {
  const load = measured.first_load_ms as { p50: number; max: number };
  const axe = measured.axe as Record<string, unknown[]>;
  const findings = Object.values(axe).reduce((n, v) => n + v.length, 0);
  writeSection('portal', {
    command: 'MSG_WRITE_FIGURES=1 npx jest test/browser/portal.test.ts',
    measured: today(),
    // The first load is wall time: on a busy machine it says more of the load than of the portal.
    environment: `Debian's chromium, headless, through playwright-core, against npm start on the same 2-core machine; load average ${loadavg()[0].toFixed(1)}`,
    source: 'test/browser/console-fixture.ts',
    markdown: [
      '| what | measured |',
      '|---|---:|',
      `| JavaScript, gzipped (the console's build) | ${jsGzipBytes.toLocaleString('en-US')} bytes |`,
      `| a magic link to the signed-in portal, p50 of 5 (max) | ${Math.round(load.p50)} ms (${Math.round(load.max)} ms) |`,
      `| axe-core findings of any impact on ${Object.keys(axe).length} views | ${findings} |`,
    ].join('\n'),
  });
}
