/**
 * `npm run openapi [-- FILE]`: writes the OpenAPI 3.1 document (lambda/api-docs/openapi.ts) to
 * stdout, or to FILE.
 */
import { writeFileSync } from 'node:fs';
import { buildOpenApi } from '../lambda/api-docs/openapi';

const text = `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
const file = process.argv[2];
if (file) {
  writeFileSync(file, text);
  process.stderr.write(`wrote ${file}\n`);
} else {
  process.stdout.write(text);
}
