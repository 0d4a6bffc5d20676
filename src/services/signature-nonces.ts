import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UnauthorizedError } from '../domain/errors';
import { firstBodyOfNonce } from '../deliveries/delivery-store';

/** A signed value already used with another body: the 401 of a replay (the seller sees it as `signed value replayed`). */
export class ReplayRefusedError extends UnauthorizedError {
  constructor() {
    super('this signature was already used with another body: replay refused');
  }
}

const sha256 = (value: string | Buffer): Buffer => createHash('sha256').update(value).digest();

/**
 * Claims a signed nonce for this body, inside the delivery's transaction: the first delivery with
 * it records it; a later one with the same body is the platform's redelivery and passes; one with
 * another body is a replay of the signature and is refused (401, nothing recorded). The row lock
 * taken by the insert orders two deliveries racing with the same nonce.
 *
 * Kept for good: the signature covers no body and never expires, so a nonce forgotten would make
 * its signature good for any body again. A row is the two SHA-256 digests (32 bytes each) beside
 * the organisation and platform, whatever the nonce's length.
 */
export async function claimSignedNonce(
  tx: EntityManager,
  key: { orgId: string; platform: string; nonce: string },
  rawBody: Buffer,
  now: Date,
): Promise<void> {
  const bodySha256 = sha256(rawBody);
  const firstBody = await firstBodyOfNonce(tx, { orgId: key.orgId, platform: key.platform, nonceSha256: sha256(key.nonce) }, bodySha256, now);
  if (!firstBody.equals(bodySha256)) {
    throw new ReplayRefusedError();
  }
}
