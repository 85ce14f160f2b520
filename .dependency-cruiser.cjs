/**
 * The import rules of the layout (docs/development.md "Project layout"), checked by
 * `npm run lint:deps` (dependency-cruiser): imports point down only, handlers → operations
 * (publishing/, queues/, streams/, subscriptions/, webhooks/, schedules/, ...) → storage/ and
 * adapters/ → domain/; the local runtime and the tests stay out of what is deployed.
 * Rule syntax: https://github.com/sverweij/dependency-cruiser/blob/main/doc/rules-reference.md
 */

/** The folders of lambda/ above storage/ and adapters/: the operations, their wiring, the docs. */
const ABOVE_STORAGE = [
  'handlers', 'middleware', 'publishing', 'queues', 'streams', 'subscriptions', 'webhooks', 'schedules',
  'sweeper', 'applications', 'catalog', 'console', 'long-poll', 'api-docs', 'workflows',
];

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
        pathNot: ['^lambda/domain/', '(^|/)node_modules/(zod|croner)/'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'storage-and-adapters-look-down',
      severity: 'error',
      comment:
        'lambda/storage/ and lambda/adapters/ import only domain/, each other and the shared base (config, clients, ' +
        'observability): never an operation, a middleware or a handler. When storage needs what an upper layer does, ' +
        'the upper layer does it with storage\'s answer.',
      from: { path: '^lambda/(storage|adapters)/' },
      to: { path: `^lambda/(${ABOVE_STORAGE.join('|')})/` },
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
      from: { path: '^lambda/', pathNot: '^lambda/(handlers|middleware)/' },
      to: { path: '^lambda/middleware/', dependencyTypesNot: ['type-only'] },
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
