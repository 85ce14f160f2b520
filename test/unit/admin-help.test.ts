import { COMMANDS, run, USAGE } from '../../bin/admin';
import { COMMAND_HELP } from '../../bin/admin-help';
import { createProgress } from '../../bin/admin-progress';

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  // No target is resolved for help: an environment without any endpoint is enough.
  const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('admin CLI help', () => {
  it('has a help entry for every command, and a command for every help entry', () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it.each(Object.keys(COMMAND_HELP).map((c) => [c]))('prints only the usage of %s for `<command> --help`', async (command) => {
    const r = await admin(...command.split(' '), '--help');
    expect(r.code).toBe(0);
    expect(r.out.startsWith(`Usage: npm run admin -- ${command}`)).toBe(true);
    // No other command's synopsis.
    for (const other of Object.keys(COMMAND_HELP).filter((c) => c !== command && !c.startsWith(`${command} `))) {
      expect(r.out).not.toMatch(new RegExp(`^ {2}(npm run admin -- )?${other} `, 'm'));
    }
    expect(r.err).toBe('');
  });

  it('prints a command usage for `help <command>` and `-h`, with its options and examples', async () => {
    const viaHelp = await admin('help', 'limits', 'set');
    expect(viaHelp.out).toBe((await admin('limits', 'set', '-h')).out);
    expect(viaHelp.out).toMatch(/Options:\n {2}--publish N/);
    expect(viaHelp.out).toContain('npm run admin -- limits set acme --consume 1000');
  });

  it('lists the commands of a group for `<group> --help`', async () => {
    const r = await admin('key', '--help');
    expect(r.out.split('\n').filter((l) => l.startsWith('  npm run admin -- key '))).toHaveLength(3);
  });

  it('prints the whole usage without a command, and for an unknown one', async () => {
    expect((await admin('--help')).out).toBe(USAGE);
    expect((await admin('frobnicate', '--help')).out).toBe(USAGE);
    for (const c of Object.keys(COMMAND_HELP)) expect(USAGE).toContain(`  ${c}`);
  });
});

describe('admin CLI progress', () => {
  it('prints counts, share of the total and rate per batch, then a summary', () => {
    const lines: string[] = [];
    let t = 0;
    const p = createProgress({ label: 'redrive', unit: 'messages', write: (l) => lines.push(l), now: () => t });
    t = 500;
    p.step(25);
    p.setTotal(60);
    t = 1000;
    p.step(50, { expired: 2, published_not_removed: 0 });
    t = 2000;
    expect(p.finish(60, { expired: 2 })).toBe('redrive: done: 60 messages in 2.0 s, 30.0 messages/s, expired 2');
    expect(lines).toEqual([
      'redrive: 25 messages in 0.5 s, 50.0 messages/s',
      'redrive: 50 of 60 messages (83%) in 1.0 s, 50.0 messages/s, expired 2',
      'redrive: done: 60 messages in 2.0 s, 30.0 messages/s, expired 2',
    ]);
  });
});
