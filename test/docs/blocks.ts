/**
 * The code blocks of a Markdown page, as the docs test runs them: fenced blocks whose info string
 * starts with sh, bash or shell (run by bash) or ts / typescript (run by tsx), in page order.
 * A block that cannot run against a fresh local runtime (cdk deploy, AWS-only commands, a server
 * that runs until Ctrl-C) says so in its info string, e.g. ```sh skip-run, which GitHub renders
 * as a plain sh block; every other block must run. Output samples (```, ```json, ```mermaid) are
 * counted, never run.
 */
type BlockKind = 'shell' | 'ts' | 'other';

export interface Block {
  kind: BlockKind;
  /** 1-based line of the opening fence. */
  line: number;
  info: string;
  skip: boolean;
  code: string;
}

const SHELL = new Set(['sh', 'bash', 'shell']);
const TS = new Set(['ts', 'typescript']);

export function extractBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^(`{3,}|~{3,})\s*(.*)$/);
    if (!open) continue;
    const fence = open[1];
    const info = open[2].trim();
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j].startsWith(fence) && lines[j].slice(fence.length).trim() === '')) body.push(lines[j++]);
    if (j === lines.length) throw new Error(`line ${i + 1}: the code block opened here is never closed`);
    const lang = info.split(/\s+/)[0] ?? '';
    const kind: BlockKind = SHELL.has(lang) ? 'shell' : TS.has(lang) ? 'ts' : 'other';
    blocks.push({ kind, line: i + 1, info, skip: /\bskip-run\b/.test(info), code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The page's references to the local runtime's default address, pointed at the port the test serves on. */
export function onPort(code: string, port: number): string {
  return code.replace(/\b(127\.0\.0\.1|localhost):8080\b/g, `$1:${port}`);
}
