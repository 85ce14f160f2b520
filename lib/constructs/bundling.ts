/**
 * How each function's code is bundled (esbuild through NodejsFunction): where the AWS SDK comes
 * from, the modules left out or built apart to be loaded on demand, and files copied beside the
 * bundle. ./functions.ts applies it to every function; the bundle tests and benches build with it.
 */
import { join } from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { FunctionId } from '../table-access';

/**
 * Where the AWS SDK comes from (measured by `npm run bench:sdk`, README
 * "Performance").
 * - `bundled` (the default): the SDK from node_modules, the version package-lock.json pins and the
 *   tests run, tree-shaken by esbuild to the clients the handler imports. It adds 195 to 250 KB
 *   minified per bundle, and cuts the CPU time of a cold import to a third or a half (median
 *   64 ms instead of 172 ms over the ten functions): one parsed file instead of the runtime SDK's
 *   packages resolved and loaded one by one.
 * - `runtime`: `@aws-sdk/*` stays external and the function runs the SDK v3 that the Node.js 22
 *   runtime ships, whatever version AWS has put there (older than the lock's, and it changes with
 *   runtime updates), so code that relies on a newer SDK behaviour (e.g. the item a conditional
 *   write returns with its refusal, lambda/sweeper/storage/sweeper-lease.ts) is untested there.
 */
export type AwsSdkSource = 'runtime' | 'bundled';

/**
 * With the SDK bundled, the default credential chain still loads these through a lazy
 * `import()` when the environment holds no credentials. Lambda always sets AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, so `fromEnv` answers first and these modules (with
 * the STS, SSO and sign-in clients they pull in, about 130 KB minified) are never loaded.
 */
const NEVER_LOADED_IN_LAMBDA = [
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@smithy/credential-provider-imds',
];

export function bundlingOptions(sdk: AwsSdkSource = 'bundled'): BundlingOptions {
  return {
    // Local esbuild only; the project pins it in devDependencies.
    forceDockerBundling: false,
    format: OutputFormat.ESM,
    target: 'node22',
    minify: true,
    sourceMap: false,
    // ES module builds first: they tree-shake, CommonJS builds do not (with the SDK bundled,
    // the namespace handler is 364 KB instead of 565 KB).
    mainFields: ['module', 'main'],
    externalModules: sdk === 'runtime' ? ['@aws-sdk/*'] : NEVER_LOADED_IN_LAMBDA,
    // CommonJS dependencies bundled into an ES module may still call require() for builtins.
    banner: "import { createRequire as __msgCreateRequire } from 'node:module'; const require = __msgCreateRequire(import.meta.url);",
  };
}

/**
 * Modules a function loads only when it needs them, built as files of their own beside its
 * `index.mjs` (an afterBundling step with the same esbuild settings) and named to the code by an
 * environment variable: Ajv, for the event catalog's schemas (lambda/catalog/load-validators.ts),
 * about 145 KB minified that a publish without an enforced schema never loads.
 */
export const LAZY_MODULES: Partial<Record<FunctionId, { source: string; file: string; envVar: string }[]>> = {
  publish: [{ source: 'lambda/catalog/validators.ts', file: 'catalog-validators.mjs', envVar: 'MSG_CATALOG_VALIDATORS' }],
  catalog: [{ source: 'lambda/catalog/validators.ts', file: 'catalog-validators.mjs', envVar: 'MSG_CATALOG_VALIDATORS' }],
};

export function lazyModuleOptions(id: FunctionId, base: BundlingOptions): { bundling: BundlingOptions; environment: Record<string, string> } {
  const lazy = LAZY_MODULES[id] ?? [];
  if (!lazy.length) return { bundling: base, environment: {} };
  const q = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;
  const build = (inputDir: string, outputDir: string) =>
    lazy.map((m) =>
      [
        q(join(inputDir, 'node_modules', '.bin', 'esbuild')),
        q(join(inputDir, m.source)),
        '--bundle --platform=node --format=esm --target=node22 --minify --main-fields=module,main',
        `--outfile=${q(join(outputDir, m.file))}`,
        `--banner:js=${q(base.banner ?? '')}`,
      ].join(' '),
    );
  return {
    bundling: { ...base, commandHooks: { beforeBundling: () => [], beforeInstall: () => [], afterBundling: build } },
    // Relative to index.mjs, where import() resolves it.
    environment: Object.fromEntries(lazy.map((m) => [m.envVar, `./${m.file}`])),
  };
}
