import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A secret kept in a file under DATA_DIR, made on first start: the file's text, made by `make` when
 * there is none. Several processes may start together (`npm run start:cluster`): the text is written
 * to a file of this process's own and linked into place, so the file appears whole or not at all,
 * and each process reads the one that was linked first. (Created in place with `wx`, a process that
 * lost the race could read the file between its maker's open and write: empty.)
 */
export async function dataDirSecret(dataDir: string, name: string, make: () => string): Promise<string> {
  const file = path.join(dataDir, name);
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const text = `${make()}\n`;
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, text, { flag: 'wx', mode: 0o600 });
  try {
    await link(draft, file);
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(draft);
  }
  // Another process linked its secret first: that one is kept.
  return readFile(file, 'utf8');
}
