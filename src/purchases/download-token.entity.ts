import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { LinkOrigin } from '../domain/evidence';
import type { Purchase } from './purchase-store';

/** A download link's token, stored only as its SHA-256. */
@Entity({ tableName: 'download_token' })
export class DownloadToken {
  [OptionalProps]?: 'createdAt' | 'usedAt' | 'issuedVia';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne('Purchase', { deleteRule: 'cascade', index: true })
  purchase!: Purchase;

  @Property({ type: 'text', unique: true })
  tokenHash!: string;

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  /** Set by download-complete: the link then answers 410. */
  @Property({ type: 'timestamptz', nullable: true })
  usedAt: Date | null = null;

  /** How it was issued (the dispute evidence lists it): receipt, /my, fresh-link or re-arm. */
  @Property({ type: 'text' })
  issuedVia: LinkOrigin = 'receipt';

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
