/**
 * The design records (docs/design/, development.md "Writing docs") keep one fixed form, that of
 * Nygard's decision records as MADR writes them: `NNNN-short-title.md`, a title numbered like its
 * file, a status and a date, then the sections in order. Each is listed in docs/design/README.md,
 * and the index lists no record that is not there. Like the user pages, a record cites no file
 * outside the repository and no internal note; its relative links (to ../page.md, to another
 * record) name files that exist.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const DIR = join(__dirname, '../../docs/design');
const SECTIONS = ['## Context and problem', '## Decision', '## Consequences', '## Measurements', '## Alternatives considered'];
const records = readdirSync(DIR)
  .filter((f) => f !== 'README.md' && f.endsWith('.md'))
  .sort();
const index = readFileSync(join(DIR, 'README.md'), 'utf8');

describe('design records', () => {
  it('are numbered 0001, 0002, ... without gaps, one decision per file', () => {
    expect(records.length).toBeGreaterThan(0);
    records.forEach((f, i) => expect(f).toMatch(new RegExp(`^${String(i + 1).padStart(4, '0')}-[a-z0-9]+(-[a-z0-9]+)*\\.md$`)));
  });

  it.each(records)('%s has its number as title, a status, a date and the sections in order', (f) => {
    const text = readFileSync(join(DIR, f), 'utf8');
    const lines = text.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^# ${Number(f.slice(0, 4))}\\. \\S`));
    expect(text).toMatch(/^- Status: (proposed|accepted|superseded|deprecated)\b/m);
    expect(text).toMatch(/^- Date: \d{4}-\d{2}-\d{2}/m);
    const found = lines.filter((l) => l.startsWith('## '));
    expect(found).toEqual(SECTIONS);
    // Every section says something, if only that nothing was recorded.
    for (const [i, s] of SECTIONS.entries()) {
      const body = text.slice(text.indexOf(s) + s.length, i + 1 < SECTIONS.length ? text.indexOf(SECTIONS[i + 1]) : undefined);
      expect([s, body.trim().length > 0]).toEqual([s, true]);
    }
  });

  it('the index lists every record, and only records that exist', () => {
    const listed = [...index.matchAll(/\]\((\d{4}-[^)#]+\.md)\)/g)].map((m) => m[1]);
    expect([...new Set(listed)].sort()).toEqual(records);
  });

  it.each(records)('%s cites no file outside the repository and no internal note', (f) => {
    const text = readFileSync(join(DIR, f), 'utf8');
    const found = [/\bSPEC\.md\b/, /\bDESIGN\.md\b/, /\bSTYLE\.md\b/, /\bissue \d+/i, /issue note/i, /not yet checked/i].filter((re) => re.test(text)).map(String);
    expect(found).toEqual([]);
  });

  it.each(records)('%s names no internal branch (such as a review or fix branch: say what changed, and when)', (f) => {
    const text = readFileSync(join(DIR, f), 'utf8');
    expect(text.match(/\b(review|fix)[0-9]+\b/gi) ?? []).toEqual([]);
  });

  it.each(records)('%s files its measurements under Measurements, never under Alternatives considered', (f) => {
    const text = readFileSync(join(DIR, f), 'utf8');
    const alternatives = text.slice(text.indexOf('\n## Alternatives considered\n'));
    // A `###` section after the alternatives is where measurements were once filed by mistake.
    expect([...alternatives.matchAll(/^### .*/gm)].map((m) => m[0])).toEqual([]);
    expect([/<!-- figures:/.test(alternatives), /<!-- fig /.test(alternatives)]).toEqual([false, false]);
  });

  it.each(records)('%s dates each measurement and names its command (or says it is arithmetic, or not recorded)', (f) => {
    const text = readFileSync(join(DIR, f), 'utf8');
    const measurements = text.slice(text.indexOf('\n## Measurements\n') + 1, text.indexOf('\n## Alternatives considered\n'));
    const undated = measurements.split(/\n(?=### )/).filter((part) => {
      // Figures are digits outside links, code spans, addresses and record numbers.
      const bare = part.replace(/^.*\n/, '').replace(/\[[^\]]*\]\([^)]*\)|`[^`]*`|https?:\/\/\S+|\brecords? \d+/g, '');
      if (!/\d/.test(bare)) return false;
      const dated = /\b\d{4}-\d{2}-\d{2}\b/.test(part);
      const command = /`([A-Z_]+=\S+ )*(npx|npm|node) [^`]+`|<!-- figures:/.test(part);
      return !((dated && command) || /not recorded|from the code|arithmetic, not measured/i.test(part));
    });
    expect(undated.map((part) => part.split('\n')[0])).toEqual([]);
  });

  it.each(['README.md', ...records])('%s links only to files that exist', (f) => {
    const text = readFileSync(join(DIR, f), 'utf8');
    const targets = [...text.matchAll(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
    expect(targets.filter((l) => !existsSync(join(dirname(join(DIR, f)), l)))).toEqual([]);
  });
});
