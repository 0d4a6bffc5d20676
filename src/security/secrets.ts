import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 hex: enough for high-entropy secrets (API keys, download tokens), ASVS 6.5.2. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** 32 random bytes (256 bits) from the CSPRNG, URL-safe. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export interface MintedApiKey {
  key: string;
  hash: string;
  /** Shown on the API Key page to recognise the key without revealing it. */
  prefix: string;
}

const API_KEY_PREFIX = 'dlv_';

export function mintApiKey(): MintedApiKey {
  const key = `${API_KEY_PREFIX}${randomSecret()}`;
  return { key, hash: sha256Hex(key), prefix: key.slice(0, API_KEY_PREFIX.length + 6) };
}

export interface MintedToken {
  token: string;
  hash: string;
}

/** A download link token: random, stored only as its hash. */
export function mintDownloadToken(): MintedToken {
  const token = randomSecret();
  return { token, hash: sha256Hex(token) };
}
