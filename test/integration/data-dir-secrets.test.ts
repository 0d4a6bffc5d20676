/**
 * The session secret and the key file under DATA_DIR are made on first start, and several API
 * processes start together under `npm run start:cluster`: each must get the one kept, never a file
 * read between its maker's open and write (a clean-clone CI run saw an API refuse to start on that:
 * "holds no usable session secret"). Processes of the build race for fresh folders, round after round.
 * The race is rare: before the fix a shell loop of the same lost 1 round of 15; this test's 20 rounds
 * passed once on the old code, so it guards the fix without proving the bug each run.
 */
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnWatched } from '../../src/dev/child-processes';
import { SESSION_SECRET_FILE } from '../../src/security/session-secret';

const DIST = path.resolve(__dirname, '../../dist/src/security');

/** One process: prints what it got, or fails with the error. */
async function starter(dataDir: string, code: string): Promise<{ status: number | null; out: string }> {
  const { child, output } = spawnWatched(process.execPath, ['-e', code], { cwd: process.cwd(), env: { ...process.env, DATA_DIR: dataDir } });
  // 'close', not 'exit': its output has all been read by then.
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, out: output() };
}

const SESSION = `require(${JSON.stringify(`${DIST}/session-secret.js`)}).sessionSecretOf({ dataDir: process.env.DATA_DIR })
  .then((s) => console.log(s), (e) => { console.error(e.message); process.exit(1); })`;

// The key file is made the same way (dataDirSecret): one of the two is raced here.
test('eight processes racing for a fresh session secret all get the one kept, round after round', async () => {
  for (let round = 0; round < 20; round++) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'data-dir-secret-'));
    try {
      const results = await Promise.all(Array.from({ length: 8 }, () => starter(dataDir, SESSION)));
      expect(results.filter((r) => r.status !== 0)).toEqual([]);
      expect(new Set(results.map((r) => r.out.trim())).size).toBe(1);
      expect((await readFile(path.join(dataDir, SESSION_SECRET_FILE), 'utf8')).trim()).not.toBe('');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
}, 120_000);
