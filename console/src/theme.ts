/**
 * The portal's theme (docs/portal.md "Theme"): `brand` (a hex colour, e.g. `#c2410c`) becomes the
 * CSS variable `--brand` that buttons, links and focus rings use, and `logo` (an https URL on an
 * origin the namespace allows: the page's CSP names them in img-src) is shown in the header.
 * The namespace's stored theme comes in the page's `<meta name="portal-theme">` (the API's portal
 * page writes it); the link's `brand` and `logo` parameters fill only what it leaves unset.
 * Anything else is ignored. Set through the CSSOM, which the page's CSP allows (it forbids inline
 * style attributes only).
 */
import { storedTheme, themeOf } from './theme-rules';

let logo: string | undefined;

export function applyTheme(params: URLSearchParams): void {
  const t = themeOf(storedTheme(document.querySelector('meta[name="portal-theme"]')?.getAttribute('content')), params);
  if (t.brand) document.documentElement.style.setProperty('--brand', t.brand);
  logo = t.logo;
}

export const logoUrl = () => logo;
