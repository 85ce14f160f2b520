/**
 * The portal's theme, from its address (docs/portal.md): `brand` (a hex colour, e.g. `#c2410c`)
 * becomes the CSS variable `--brand` that buttons, links and focus rings use, and `logo` (an https
 * URL on an origin the namespace allows: the page's CSP names them in img-src) is shown in the
 * header. Anything else is ignored. Set through the CSSOM, which the page's CSP allows (it forbids
 * inline style attributes only).
 */
let logo: string | undefined;

export function applyTheme(params: URLSearchParams): void {
  const brand = params.get('brand');
  if (brand && /^#[0-9a-fA-F]{3,8}$/.test(brand)) document.documentElement.style.setProperty('--brand', brand);
  const l = params.get('logo');
  if (l) {
    try {
      if (new URL(l).protocol === 'https:') logo = l;
    } catch {
      // not a URL: no logo
    }
  }
}

export const logoUrl = () => logo;
