import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UnauthorizedError } from '../domain/errors';

/**
 * Claims a signed nonce for this body, inside the delivery's transaction: the first delivery with
 * it records it; a later one with the same body is the platform's redelivery and passes; one with
 * another body is a replay of the signature and is refused (401, nothing recorded). The row lock
 * taken by the insert orders two deliveries racing with the same nonce.
 */
export async function claimSignedNonce(
  tx: EntityManager,
  key: { orgId: string; platform: string; nonce: string },
  rawBody: Buffer,
  now: Date,
): Promise<void> {
  const bodySha256 = createHash('sha256').update(rawBody).digest('hex');
  const [row] = await tx.execute<Array<{ body_sha256: string }>>(
    `insert into signature_nonce (organisation_id, platform, nonce, body_sha256, created_at) values (?, ?, ?, ?, ?)
     on conflict (organisation_id, platform, nonce) do update set nonce = excluded.nonce
     returning body_sha256`,
    [key.orgId, key.platform, key.nonce, bodySha256, now],
  );
  if (row.body_sha256 !== bodySha256) {
    throw new UnauthorizedError('this signature was already used with another body: replay refused');
  }
}

/** Forgets nonces older than the replay window (a platform's retries end long before). */
export async function pruneSignedNonces(em: EntityManager, now: Date, windowMs: number): Promise<number> {
  const result = await em.execute<{ affectedRows: number }>(
    'delete from signature_nonce where created_at < ?',
    [new Date(now.getTime() - windowMs)],
    'run',
  );
  return result.affectedRows;
}
