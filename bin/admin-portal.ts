/**
 * The admin CLI's portal commands (docs/portal.md "The portal in the browser"): the origins that
 * may frame a namespace's portal, and its theme. Kept apart from ./admin.ts, which wires them.
 */
import { AdminError } from './admin-target';
import type { PortalTheme } from '../lambda/core/rules/portal';

interface PortalContext {
  args: string[];
  print(human: string, json: unknown): void;
}

interface Helpers {
  /** Throws unless the namespace exists. */
  mustExist(namespace: string): Promise<unknown>;
  /** The name, or a usage error for one that is no namespace name. */
  namespaceArg(name: string): string;
}

const themeText = (t: PortalTheme | undefined) =>
  t ? `brand ${t.brand ?? 'none'}, logo ${t.logo ?? 'none'}` : 'none (the link may carry brand and logo)';

/** `none` or nothing: the field is not stored. */
const valueOf = (raw: string | undefined) => (raw === undefined || raw === 'none' ? undefined : raw);

export function portalCommands({ mustExist, namespaceArg }: Helpers): Record<string, (c: PortalContext) => Promise<void>> {
  return {
    async 'portal-origins set'({ args: [ns, raw], print }) {
      const origins = raw === 'none' ? [] : (raw ?? '').split(',').filter(Boolean);
      const { portalOriginProblem } = await import('../lambda/core/rules/portal');
      const bad = origins.map((o) => portalOriginProblem(o)).find(Boolean);
      if (bad) throw new AdminError(bad, 2);
      await mustExist(namespaceArg(ns));
      const { setPortalOrigins } = await import('../lambda/namespaces/storage/namespaces');
      await setPortalOrigins(ns, origins);
      print(`portal origins of ${ns}: ${origins.join(' ') || 'none (the portal cannot be framed)'}`, { namespace: ns, portal_origins: origins });
    },

    async 'portal-origins get'({ args: [ns], print }) {
      await mustExist(namespaceArg(ns));
      const { portalOrigins } = await import('../lambda/namespaces/storage/namespaces');
      const origins = await portalOrigins(ns);
      print(`portal origins of ${ns}: ${origins.join(' ') || 'none (the portal cannot be framed)'}`, { namespace: ns, portal_origins: origins });
    },

    async 'portal-theme set'({ args: [ns, brand, logo], print }) {
      const theme: PortalTheme = { ...(valueOf(brand) ? { brand: valueOf(brand) } : {}), ...(valueOf(logo) ? { logo: valueOf(logo) } : {}) };
      const { portalThemeProblem } = await import('../lambda/core/rules/portal');
      const bad = portalThemeProblem(theme);
      if (bad) throw new AdminError(bad, 2);
      await mustExist(namespaceArg(ns));
      const { setPortalTheme } = await import('../lambda/namespaces/storage/namespaces');
      const stored = Object.keys(theme).length ? theme : undefined;
      await setPortalTheme(ns, stored);
      print(`portal theme of ${ns}: ${themeText(stored)}`, { namespace: ns, portal_theme: stored ?? null });
    },

    async 'portal-theme get'({ args: [ns], print }) {
      await mustExist(namespaceArg(ns));
      const { portalSettings } = await import('../lambda/namespaces/storage/namespaces');
      const { theme } = await portalSettings(ns);
      print(`portal theme of ${ns}: ${themeText(theme)}`, { namespace: ns, portal_theme: theme ?? null });
    },
  };
}
