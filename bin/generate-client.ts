/**
 * `npm run client`: regenerates client/api.ts, the TypeScript types of the API, from the OpenAPI
 * document the service serves (lambda/api-docs/openapi.ts) with openapi-typescript.
 * `npm run client -- --check [FILE...]` writes nothing and exits 1 when client/api.ts (or any FILE)
 * is out of date (test/unit/client.test.ts runs it, so a changed route or schema cannot ship with
 * stale types).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildOpenApi } from '../lambda/api-docs/openapi';

const DEFAULT_FILE = join(import.meta.dirname, '../client/api.ts');

const HEADER = `/**
 * Types of the messaging service API, generated from its OpenAPI document by openapi-typescript.
 * Do not edit: run \`npm run client\` after changing a route or a schema.
 */
`;

/** The file's text for the current document. */
async function generateClientTypes(): Promise<string> {
  // defaultNonNullable off: a request field with a default is optional for the caller, not required.
  const ast = await openapiTS(buildOpenApi() as never, { defaultNonNullable: false });
  return `${HEADER}\n${astToString(ast)}`;
}

const check = process.argv.indexOf('--check');
const text = await generateClientTypes();
if (check !== -1) {
  // Each file given after --check (client/api.ts when none) is compared with one generation.
  const files = process.argv.slice(check + 1).filter((a) => !a.startsWith('--'));
  let stale = 0;
  for (const file of files.length ? files : [DEFAULT_FILE]) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      // A missing file is out of date too.
    }
    if (current !== text) {
      stale++;
      process.stderr.write(`${file} is out of date with the OpenAPI document: run \`npm run client\` and commit the result.\n`);
    } else process.stderr.write(`${file} is up to date\n`);
  }
  if (stale) process.exit(1);
} else {
  writeFileSync(DEFAULT_FILE, text);
  process.stderr.write(`wrote ${DEFAULT_FILE}\n`);
}
