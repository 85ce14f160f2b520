/**
 * The console's build (docs/console.md): Preact, served under /console/ on the API's origin (the
 * local gateway, or CloudFront in the stack). No inline script or style ends up in the output, so
 * the page runs under a CSP without 'unsafe-inline'; the build fails when the JavaScript is above
 * its budget of 150 KB gzipped.
 */
import { defineConfig, type Plugin } from 'vite';
import preact from '@preact/preset-vite';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

export const JS_BUDGET_GZIP_BYTES = 150 * 1024;

/** Measures every emitted chunk gzipped, prints the total and fails the build above the budget. */
function jsBudget(): Plugin {
  return {
    name: 'console-js-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      let total = 0;
      for (const file of Object.values(bundle)) {
        if (file.type === 'chunk') total += gzipSync(file.code, { level: 9 }).length;
      }
      const line = `console JavaScript: ${(total / 1024).toFixed(1)} KB gzipped (budget ${JS_BUDGET_GZIP_BYTES / 1024} KB)`;
      this.info(line);
      this.emitFile({ type: 'asset', fileName: 'build-size.json', source: JSON.stringify({ js_gzip_bytes: total, budget_bytes: JS_BUDGET_GZIP_BYTES }) });
      if (total > JS_BUDGET_GZIP_BYTES) this.error(`${line}: over budget; drop a dependency or split the code`);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [preact(), jsBudget()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No `data:` or inline assets: everything is a file of the console's own origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  logLevel: 'info',
});
