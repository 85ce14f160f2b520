/**
 * An installed Chromium or Chrome (CHROMIUM_PATH, else the first of bin/test-prerequisites.ts's
 * candidates: Debian's chromium, Ubuntu's snap, Google Chrome) driven by playwright-core,
 * headless, with a fresh profile per run and nothing that phones home; and axe-core run inside a page.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { findChromium, isSnap } from '../../bin/test-prerequisites';

const CHROMIUM = findChromium() ?? '/usr/bin/chromium';

/** Where the profile goes: a snap's browser reaches only its own folder of $HOME (isSnap). */
function profileParent(): string {
  if (!isSnap(CHROMIUM)) return tmpdir();
  const dir = join(homedir(), 'snap', 'chromium', 'common', 'console-tests');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(profileParent(), 'console-chromium-'));
  // launchPersistentContext is Playwright's way to pass the profile (--user-data-dir) of its own.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 860 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * axe-core's violations on the page as it is now. The source is evaluated through the DevTools
 * protocol (page.evaluate), which the page's CSP does not govern, so the console's CSP stays on.
 */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const g = globalThis as unknown as { document: unknown; axe: { run(ctx: unknown, o: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }> } };
    const r = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
}
