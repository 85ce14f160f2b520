/**
 * The response headers of every console file, wherever it is served: the local gateway
 * (local/console-static.ts) and CloudFront's response headers policy (lib/constructs/console.ts).
 * The CSP allows only the console's own files and its own origin's API: no inline script or style,
 * no third-party asset, no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const CONSOLE_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** The path the console is served under, on the API's origin. */
export const CONSOLE_PATH = '/console/';
