/**
 * The import rules of the layout (docs/development.md "Project layout", docs/architecture.md
 * "Features and the shared base"), checked by `npm run lint:deps` (dependency-cruiser).
 *
 * lambda/ is cut by feature: `lambda/<feature>/` for each feature of INTERFACES holds its pure rules
 * (`rules.ts` or `rules/`), its storage (`storage/`: DynamoDB records and the AWS services it talks
 * to) and its operations (the files at its top level). What every feature shares is in lambda/core/
 * (pure rules in core/rules/, records and clients in core/storage/ and core/adapters/, middleware in
 * core/middleware/, config and observability), which imports no feature. A feature's files are its
 * own, but for those it lists in INTERFACES, which any other code may import. lambda/handlers/ (the
 * entry points), lambda/api-docs/ (the OpenAPI document) and lambda/console/ (the console's
 * endpoints) sit on top. The local runtime and the tests stay out of what is deployed. The
 * benchmarks (bench/) are outside code like local/ and bin/: a feature through its interface only;
 * the examples (examples/) are a user's code: the typed client (client/) and packages only.
 * Rule syntax: https://github.com/sverweij/dependency-cruiser/blob/main/doc/rules-reference.md
 */

/** The middleware (middy) that handlers run: the shared ones and the rate limiter (lambda/limits/). */
const MIDDLEWARE = ['^lambda/core/middleware/', '^lambda/limits/rate-limit\\.ts$'];

const { INTERFACES, MEETS } = require('./.dependency-cruiser-features.cjs');
const FEATURES = Object.keys(INTERFACES);
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Pure rules: `lambda/<feature>/rules.ts` or `lambda/<feature>/rules/`, and lambda/core/rules/. */
const PURE_RULES = '^lambda/[^/]+/rules(\\.ts$|/)';
/**
 * The Node built-ins pure rules may import: they compute and touch no file, network, process or
 * thread (node:vm runs the catalog's time limit on a regular expression, node:zlib gzips a delivery's
 * body in memory). Not fs, http, https, net, dns, child_process, worker_threads, os.
 */
const PURE_BUILTINS = ['buffer', 'crypto', 'string_decoder', 'url', 'util', 'vm', 'zlib'];
const PURE_LIBRARIES = '(^|/)node_modules/(zod|croner)/';
/** The one pure rule that parses addresses with node:net (isIPv4, isIPv6). */
const ADDRESS_RULES = '^lambda/webhooks/rules/ssrf\\.ts$';
/** What storage may import: pure rules, storage (features' and core's), core's clients, config, observability. */
const BELOW_OPERATIONS = [
  PURE_RULES,
  '^lambda/[^/]+/storage/',
  '^lambda/core/adapters/',
  '^lambda/core/(config|observability|client-plugins)\\.ts$',
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
      name: 'no-cycle-between-features',
      severity: 'error',
      comment:
        'A cycle through two folders of lambda/, type imports included: features meet through named interfaces ' +
        '(MEETS), so no feature depends on another that depends on it. Put the shared shape in the side that ' +
        'does not need the other (as publishing/sink.ts and core/sweep-task.ts do).',
      from: { path: '^lambda/([^/]+)/' },
      to: { circular: true, viaSomeNot: '^lambda/$1/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file or package.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'rules-are-pure',
      severity: 'error',
      comment:
        'Pure rules (lambda/core/rules/, a feature\'s rules.ts or rules/) import only pure rules, the Node built-ins that ' +
        `compute (${PURE_BUILTINS.join(', ')}: no file, network, process or thread) and plain libraries (zod, croner), ` +
        'never the AWS SDK, storage, adapters, operations, handlers, config or the CDK.',
      from: { path: PURE_RULES, pathNot: ADDRESS_RULES },
      to: { pathNot: [PURE_RULES, PURE_LIBRARIES, `^(node:)?(${PURE_BUILTINS.join('|')})$`] },
    },
    {
      name: 'address-rules-are-pure',
      severity: 'error',
      comment:
        'The SSRF rules (lambda/webhooks/rules/ssrf.ts) are pure rules that also parse addresses with node:net\'s ' +
        'isIPv4 and isIPv6 (functions of a string); the rest of node:net (sockets) stays in storage/target-guard.ts.',
      from: { path: ADDRESS_RULES },
      to: { pathNot: [PURE_RULES, PURE_LIBRARIES, `^(node:)?(${[...PURE_BUILTINS, 'net'].join('|')})$`] },
    },
    ...FEATURES.map((feature) => ({
      name: `${feature}-through-its-interface`,
      severity: 'error',
      comment:
        `Code outside lambda/${feature}/ (but tests) imports only the files of its interface (INTERFACES.${feature} in ` +
        '.dependency-cruiser-features.cjs): the rest is the feature\'s own, free to change without touching other code. ' +
        'Add a file to the interface, with who needs it, rather than reaching past it.',
      // Tests (reached here through bin/simulate.ts) may test a feature's own files.
      from: { pathNot: [`^lambda/(${[feature, ...(INTERFACES[feature].openTo ?? [])].join('|')})/`, '^test/'] },
      to: {
        path: `^lambda/${feature}/`,
        pathNot: INTERFACES[feature].files.map((f) => `^lambda/${feature}/${escape(f)}$`),
      },
    })),
    ...FEATURES.map((feature) => {
      const others = FEATURES.filter((f) => f !== feature && !(INTERFACES[feature].openTo ?? []).includes(f));
      return {
        name: `${feature}-meets-features-where-named`,
        severity: 'error',
        comment:
          `Another feature imports only the files of lambda/${feature}/ that MEETS.${feature} names (in ` +
          '.dependency-cruiser-features.cjs), a part of its interface: features meet at named points (publishing\'s sinks, ' +
          'the delivery queue, the records one reads of another), not through the files kept for the handlers.',
        from: { path: `^lambda/(${others.join('|')})/` },
        to: {
          path: `^lambda/${feature}/`,
          ...(Object.keys(MEETS[feature]).length ? { pathNot: Object.keys(MEETS[feature]).map((f) => `^lambda/${feature}/${escape(f)}$`) } : {}),
        },
      };
    }),
    ...FEATURES.flatMap((feature) =>
      Object.entries(MEETS[feature]).map(([file, by]) => {
        const others = FEATURES.filter((f) => f !== feature && !by.includes(f) && !(INTERFACES[feature].openTo ?? []).includes(f));
        return {
          name: `${feature}/${file}-meets-only-named`,
          severity: 'error',
          comment:
            `Of the other features, only ${by.join(', ')} import lambda/${feature}/${file} (MEETS.${feature} in ` +
            '.dependency-cruiser-features.cjs): a meeting point is named with who meets there. A feature that needs it is ' +
            'added to the list, with why.',
          from: { path: `^lambda/(${others.join('|')})/` },
          to: { path: `^lambda/${feature}/${escape(file)}$` },
        };
      }),
    ),
    {
      name: 'core-imports-only-core',
      severity: 'error',
      comment:
        'lambda/core/ (what every feature shares) imports only itself, packages and Node built-ins: a feature builds on ' +
        'the shared base, never the other way, and neither do the handlers, the OpenAPI document, the console\'s ' +
        'endpoints, the typed client, the console, lib/, local/ or bin/.',
      from: { path: '^lambda/core/' },
      to: { pathNot: ['^lambda/core/', '(^|/)node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'storage-looks-down',
      severity: 'error',
      comment:
        'A feature\'s storage/ and core\'s storage/ and adapters/ import only pure rules, storage, core\'s clients, ' +
        'config and observability: never an operation, a middleware or a handler. When storage needs what an ' +
        'operation does, the operation does it with storage\'s answer.',
      from: { path: ['^lambda/[^/]+/storage/', '^lambda/core/adapters/'] },
      to: { path: '^lambda/', pathNot: BELOW_OPERATIONS },
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
      name: 'docs-and-console-are-the-top',
      severity: 'error',
      comment:
        'lambda/api-docs/ (the OpenAPI document, built from the features\' request schemas) and lambda/console/ (the ' +
        'console\'s endpoints, reading several features) sit beside the handlers: no feature nor core imports them.',
      from: { path: '^lambda/', pathNot: '^lambda/(handlers|api-docs|console)/' },
      to: { path: '^lambda/(api-docs|console)/' },
    },
    {
      name: 'middleware-is-for-handlers',
      severity: 'error',
      comment:
        'The middleware (lambda/core/middleware/, the rate limiter) wires handlers (middy): operations and storage do not run it (a type of the ' +
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
        'Production code, tools, benchmarks and examples never import test code (test/), but for bin/simulate.ts: the command line of the ' +
        'seeded simulation, which lives with the tests (test/simulation/).',
      from: { path: '^(lambda|lib|local|bin|client|console|bench|examples)/', pathNot: '^bin/simulate\\.ts$' },
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
    {
      name: 'examples-as-a-user-writes-them',
      severity: 'error',
      comment:
        'The examples are what a user copies into a repository of their own: they import the typed client ' +
        '(client/), each other, Node built-ins and published packages, never the service\'s code, the local ' +
        'runtime, the tests or the benchmarks.',
      from: { path: '^examples/' },
      to: { pathNot: ['^client/', '^examples/', '(^|/)node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'service-without-bench-or-examples',
      severity: 'error',
      comment:
        'The benchmarks and the examples sit outside the service: what is deployed or run (lambda/, lib/, ' +
        'local/, client/, the console) never imports them (bin/figures.ts renders the figures bench/ records).',
      from: { path: '^(lambda|lib|local|client|console)/' },
      to: { path: '^(bench|examples)/' },
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
