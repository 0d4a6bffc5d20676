import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';
import { randomSecret } from './secrets';

const MIN_LENGTH = 32;
export const SESSION_SECRET_FILE = 'session-secret';

/**
 * The key that signs dashboard session cookies (decisions §1 SESSION_SECRET): the configured one,
 * else one generated on first start and kept under DATA_DIR, so sessions survive a restart.
 * Several API processes behind one load balancer must share SESSION_SECRET.
 */
export async function sessionSecretOf(config: Pick<Config, 'sessionSecret' | 'dataDir'>): Promise<string> {
  if (config.sessionSecret !== undefined) {
    if (config.sessionSecret.length < MIN_LENGTH) {
      throw new Error(`SESSION_SECRET must have at least ${MIN_LENGTH} characters`);
    }
    return config.sessionSecret;
  }
  const file = path.join(config.dataDir, SESSION_SECRET_FILE);
  await mkdir(config.dataDir, { recursive: true });
  try {
    // `wx`: of two processes starting together, one writes and the other reads what it wrote.
    const secret = randomSecret(48);
    await writeFile(file, `${secret}\n`, { flag: 'wx', mode: 0o600 });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stored = (await readFile(file, 'utf8')).trim();
  if (stored.length < MIN_LENGTH) throw new Error(`${file} holds no usable session secret: delete it to generate a new one`);
  return stored;
}
