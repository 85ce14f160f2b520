/**
 * `npm run diagrams`: writes the generated diagrams into docs/architecture.md, between
 * `<!-- diagram:NAME:start -->` and `<!-- diagram:NAME:end -->`. Today: `webhook-retry`, the
 * retry workflow's states from lambda/webhooks/workflows/webhook-retry.asl.json. `--check` writes nothing
 * and exits 1 when docs/architecture.md is out of date (test/unit/diagrams.test.ts checks the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { aslToMermaid, type AslDefinition } from './asl-diagram';
import { webhookRetryAslPath } from '../lambda/webhooks/workflows/definition';

/** The page that shows the generated diagrams. */
export const DIAGRAM_PAGE = 'docs/architecture.md';

/** Every generated block of the page: its marker name and Markdown. */
export function generatedBlocks(): Record<string, string> {
  const asl = JSON.parse(readFileSync(webhookRetryAslPath(), 'utf8')) as AslDefinition;
  return { 'webhook-retry': `\`\`\`mermaid\n${aslToMermaid(asl)}\`\`\`` };
}

/** `text` with each block replaced; throws for a block without markers. */
export function withBlocks(text: string, blocks: Record<string, string>): string {
  let out = text;
  for (const [name, md] of Object.entries(blocks)) {
    const start = `<!-- diagram:${name}:start -->`;
    const end = `<!-- diagram:${name}:end -->`;
    const i = out.indexOf(start);
    const j = out.indexOf(end);
    if (i === -1 || j < i) throw new Error(`${DIAGRAM_PAGE} has no ${start} ... ${end} block`);
    out = `${out.slice(0, i + start.length)}\n${md}\n${out.slice(j)}`;
  }
  return out;
}

if (/[\\/]bin[\\/]diagrams\.ts$/.test(process.argv[1] ?? '')) {
  const page = readFileSync(DIAGRAM_PAGE, 'utf8');
  const updated = withBlocks(page, generatedBlocks());
  if (process.argv.includes('--check')) {
    if (updated !== page) {
      process.stderr.write(`${DIAGRAM_PAGE} diagrams are out of date: run npm run diagrams\n`);
      process.exit(1);
    }
  } else if (updated !== page) {
    writeFileSync(DIAGRAM_PAGE, updated);
    process.stderr.write(`${DIAGRAM_PAGE} diagrams updated\n`);
  }
}
