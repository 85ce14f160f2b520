/**
 * Which theme the portal shows (docs/portal.md "Theme"), without the DOM (./theme.ts applies it;
 * unit tests run these rules under Node).
 */
export interface Theme {
  brand?: string;
  logo?: string;
}

const brandOk = (b: unknown): b is string => typeof b === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(b);
const logoOk = (l: unknown): l is string => {
  if (typeof l !== 'string') return false;
  try {
    return new URL(l).protocol === 'https:';
  } catch {
    return false; // not a URL: no logo
  }
};

/**
 * The theme to show: each stored field wins; a link parameter counts only where the namespace
 * stores none (a platform that stores its theme cannot have it changed by an edited link).
 * @example themeOf({ brand: '#111' }, new URLSearchParams('brand=%23222&logo=https://x.example/l.svg')) // { brand: '#111', logo: 'https://x.example/l.svg' }
 */
export function themeOf(stored: Theme, params: URLSearchParams): Theme {
  const brand = [stored.brand, params.get('brand')].find(brandOk);
  const l = stored.logo !== undefined ? (logoOk(stored.logo) ? stored.logo : undefined) : [params.get('logo')].find(logoOk);
  return { ...(brand ? { brand } : {}), ...(l ? { logo: l } : {}) };
}

/** The stored theme of the page's meta element, {} when there is none or it is not JSON. */
export function storedTheme(content: string | null | undefined): Theme {
  if (!content) return {};
  try {
    const t = JSON.parse(content) as unknown;
    return t && typeof t === 'object' ? (t as Theme) : {};
  } catch {
    return {};
  }
}

