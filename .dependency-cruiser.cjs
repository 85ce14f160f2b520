/**
 * The import rules of the layout (docs/development.md "Project layout", docs/architecture.md
 * "Features and the shared base"), checked by `npm run lint:deps` (dependency-cruiser).
 *
 * The code is moving from layers to features. Moved so far: `lambda/<feature>/` for the features of
 * FEATURES, each holding its pure rules (`rules.ts` or `rules/`), its storage (`storage/`) and its
 * operations; a feature's files are its own, but for those it lists in INTERFACES, which any other
 * code may import. What is not moved yet keeps the layers: handlers → operations (publishing/,
 * queues/, webhooks/, schedules/, ...) → storage/ and adapters/ → domain/; domain/, storage/ and
 * adapters/ hold what the features share (the shared base) besides what is still to move. The local
 * runtime and the tests stay out of what is deployed.
 * Rule syntax: https://github.com/sverweij/dependency-cruiser/blob/main/doc/rules-reference.md
 */

/** The folders of lambda/ above storage/ and adapters/: the operations, their wiring, the docs. */
const ABOVE_STORAGE = [
  'handlers', 'middleware', 'core/middleware', 'publishing', 'queues', 'streams', 'subscriptions', 'webhooks', 'schedules',
  'sweeper', 'applications', 'catalog', 'console', 'long-poll', 'api-docs', 'workflows', 'logs', 'namespaces',
];

/** The middleware (middy) that handlers run: the shared ones and the rate limiter (lambda/limits/). */
const MIDDLEWARE = ['^lambda/core/middleware/', '^lambda/limits/rate-limit\\.ts$'];

/**
 * The features moved into `lambda/<feature>/`, each with the files other code may import (its
 * interface, relative to its folder); every other file of a feature is its own. `openTo`: the
 * features built on it, which may import any of its files (logs is the partitioned log that
 * streams and subscriptions both store their messages in).
 */
const INTERFACES = {
  logs: {
    openTo: ['streams', 'subscriptions'],
    // The console's views of a stream's groups and a subscription's subscribers.
    files: ['storage/log-heads.ts', 'storage/log-members.ts'],
  },
  streams: {
    files: [
      'operations.ts', // the HTTP handler
      'rules.ts', // the request schemas (handler, OpenAPI)
      'storage/stream-log.ts', // publishing's sink appends to streams
      'storage/streams.ts', // the console reads a stream
      'sweep.ts', // the sweeper's task
    ],
  },
  subscriptions: {
    files: ['operations.ts', 'rules.ts', 'storage/subscription-log.ts', 'storage/subscriptions.ts', 'sweep.ts'],
  },
  namespaces: {
    // The namespace record (the authorizer, rate limits, the admin CLI) and API keys (the
    // authorizer, the portal's credentials, the admin CLI).
    files: ['storage/namespaces.ts', 'storage/api-keys.ts'],
  },
};
const FEATURES = Object.keys(INTERFACES);
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A feature's pure rules: `lambda/<feature>/rules.ts` or `lambda/<feature>/rules/`. */
const FEATURE_RULES = '^lambda/[^/]+/rules(\\.ts$|/)';
/** A feature's storage and pure rules: the part of it below its operations. */
const FEATURE_BASE = `^lambda/(${FEATURES.join('|')})/(rules|storage)(\\.ts$|/)`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle of imports: modules that load each other half-initialised, and no layer above the other. ' +
        'Move what both need down a layer. Cycles made only of type imports are erased by the compiler and allowed.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file or package.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'lambda/domain/ holds pure rules: it imports only itself, Node built-ins and plain libraries ' +
        '(zod, croner), never the AWS SDK, storage, adapters, operations, handlers, config or the CDK.',
      from: { path: '^lambda/domain/' },
      to: {
        pathNot: ['^lambda/(domain|core/rules)/', FEATURE_RULES, '(^|/)node_modules/(zod|croner)/'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'feature-rules-are-pure',
      severity: 'error',
      comment:
        'A feature\'s rules (lambda/<feature>/rules.ts or rules/) are pure as domain/ is: they import only domain/, ' +
        'pure rules of features, Node built-ins and plain libraries (zod, croner), never the AWS SDK, storage, ' +
        'adapters, operations, handlers, config or the CDK.',
      from: { path: FEATURE_RULES },
      to: {
        pathNot: ['^lambda/(domain|core/rules)/', FEATURE_RULES, '(^|/)node_modules/(zod|croner)/'],
        dependencyTypesNot: ['core'],
      },
    },
    ...FEATURES.map((feature) => ({
      name: `${feature}-through-its-interface`,
      severity: 'error',
      comment:
        `Code outside lambda/${feature}/ (but tests) imports only the files of its interface (INTERFACES.${feature} in ` +
        '.dependency-cruiser.cjs): the rest is the feature\'s own, free to change without touching other code. ' +
        'Add a file to the interface, with who needs it, rather than reaching past it.',
      // Tests (reached here through bin/simulate.ts) may test a feature's own files.
      from: { pathNot: [`^lambda/(${[feature, ...(INTERFACES[feature].openTo ?? [])].join('|')})/`, '^test/'] },
      to: {
        path: `^lambda/${feature}/`,
        pathNot: INTERFACES[feature].files.map((f) => `^lambda/${feature}/${escape(f)}$`),
      },
    })),
    {
      name: 'shared-base-imports-no-feature',
      severity: 'error',
      comment:
        'What every feature shares (domain/, adapters/, middleware/, config.ts, observability.ts) imports no ' +
        'feature of lambda/<feature>/: a feature builds on the shared base, never the other way.',
      from: { path: '^lambda/core/' },
      to: { path: `^lambda/(${FEATURES.join('|')})/` },
    },
    {
      name: 'storage-and-adapters-look-down',
      severity: 'error',
      comment:
        'lambda/storage/, lambda/adapters/ and a feature\'s storage/ import only pure rules, storage, adapters and the ' +
        'shared base (config, clients, observability): never an operation, a middleware or a handler. When storage ' +
        'needs what an upper layer does, the upper layer does it with storage\'s answer.',
      from: { path: ['^lambda/(storage|adapters|core/storage|core/adapters)/', `^lambda/(${FEATURES.join('|')})/storage/`] },
      to: { path: `^lambda/(${ABOVE_STORAGE.join('|')})/`, pathNot: FEATURE_BASE },
    },
    {
      name: 'handlers-are-the-top',
      severity: 'error',
      comment:
        'lambda/handlers/ are entry points (Lambda handlers, wired by lib/ and local/): no other lambda module ' +
        'imports one.',
      from: { path: '^lambda/', pathNot: '^lambda/handlers/' },
      to: { path: '^lambda/handlers/' },
    },
    {
      name: 'middleware-is-for-handlers',
      severity: 'error',
      comment:
        'lambda/middleware/ wires handlers (middy): operations, storage and adapters do not run it (a type of the ' +
        'request it builds may be shared).',
      from: { path: '^lambda/', pathNot: ['^lambda/handlers/', ...MIDDLEWARE] },
      to: { path: MIDDLEWARE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'deployed-code-without-local-runtime',
      severity: 'error',
      comment:
        'local/ (the local runtime and its harsh layer) is never part of what is deployed: lambda/ and lib/ do not ' +
        'import it. AWS behaviour is emulated in local/, never in the service code.',
      from: { path: '^(lambda|lib)/' },
      to: { path: '^local/' },
    },
    {
      name: 'no-test-code-outside-tests',
      severity: 'error',
      comment:
        'Production code and tools never import test code (test/), but for bin/simulate.ts: the command line of the ' +
        'seeded simulation, which lives with the tests (test/simulation/).',
      from: { path: '^(lambda|lib|local|bin|client|console)/', pathNot: '^bin/simulate\\.ts$' },
      to: { path: '^test/' },
    },
    {
      name: 'lambda-without-cdk',
      severity: 'error',
      comment:
        'Code that runs in Lambda does not import the CDK app (lib/) nor CDK packages: they would land in every ' +
        'bundle. lib/ imports lambda/ for shared names (keys, metric names), not the other way.',
      from: { path: '^lambda/' },
      to: { path: ['^lib/', '^bin/', '(^|/)node_modules/(aws-cdk-lib|aws-cdk|constructs|cdk-nag)/'] },
    },
    {
      name: 'lambda-without-dev-dependencies',
      severity: 'error',
      comment:
        'A devDependency imported at run time by Lambda code is missing from a production install (types are ' +
        'erased and allowed).',
      from: { path: '^lambda/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'console-uses-the-client',
      severity: 'error',
      comment: 'The browser console (its own Vite build) talks to the service through client/ only.',
      from: { path: '^console/' },
      to: { path: '^(lambda|lib|local|bin)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^cdk\\.out/', '^console/dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      exportsFields: ['exports'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
