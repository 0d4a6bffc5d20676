import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A signed value of a signature that does not cover the body (reseller-d-classic's security data),
 * as its SHA-256, with the SHA-256 of the body it was accepted with: the same value with another
 * body is a replay. Written in the transaction of the delivery it came with; kept for good.
 */
@Entity({ tableName: 'signature_nonce' })
export class SignatureNonce {
  @PrimaryKey({ type: 'uuid' })
  organisationId!: string;

  @PrimaryKey({ type: 'text' })
  platform!: string;

  @PrimaryKey({ type: 'blob' })
  nonceSha256!: Buffer;

  @Property({ type: 'blob' })
  bodySha256!: Buffer;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}
