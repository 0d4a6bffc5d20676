import path from 'node:path';
import type { Config } from '../config';
import { dataDirSecret } from './data-dir-secret';
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
  const stored = (await dataDirSecret(config.dataDir, SESSION_SECRET_FILE, () => randomSecret(48))).trim();
  if (stored.length < MIN_LENGTH) {
    throw new Error(`${path.join(config.dataDir, SESSION_SECRET_FILE)} holds no usable session secret: delete it to generate a new one`);
  }
  return stored;
}
