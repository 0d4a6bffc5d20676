import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A signed value of a signature that does not cover the body (reseller-d-classic's security data),
 * with the SHA-256 of the body it was accepted with: the same value with another body is a replay.
 * Written in the transaction of the delivery it came with; pruned after SIGNATURE_REPLAY_WINDOW.
 */
@Entity({ tableName: 'signature_nonce' })
export class SignatureNonce {
  @PrimaryKey({ type: 'uuid' })
  organisationId!: string;

  @PrimaryKey({ type: 'text' })
  platform!: string;

  @PrimaryKey({ type: 'text' })
  nonce!: string;

  @Property({ type: 'text' })
  bodySha256!: string;

  @Index()
  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}
