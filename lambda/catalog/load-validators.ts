/**
 * Loads ./validators.ts (Ajv, ajv-formats: about 145 KB minified) only when a schema must be
 * checked: when an event type with a schema is written, or a publish meets an enforced schema.
 * The functions' bundles stay within their cold-start budget (test/infra/bundles.test.ts), and a
 * container that never meets a schema never loads Ajv.
 *
 * In AWS the module is a file of its own beside the function's `index.mjs`, built by the
 * bundling's afterBundling hook (lib/constructs/functions.ts), and `MSG_CATALOG_VALIDATORS` names
 * it; locally and in tests it is the TypeScript module itself. The specifier is not a literal, so
 * esbuild leaves the import to run time instead of inlining the module.
 */
export type Validators = typeof import('./validators');

let loaded: Promise<Validators> | undefined;

export function validators(): Promise<Validators> {
  const specifier = process.env.MSG_CATALOG_VALIDATORS || './validators';
  loaded ??= import(specifier) as Promise<Validators>;
  return loaded;
}
