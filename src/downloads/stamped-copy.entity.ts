import { BigIntType, Entity, ManyToOne, Property } from '@mikro-orm/core';
import type { Purchase } from '../purchases/purchase-store';
import { VersionFile } from '../catalogue/version-file.entity';

/**
 * A PDF stamped for one purchase (decisions §16): made on the first request for that (purchase,
 * file), kept in the file storage under `storageKey`, served like any file with its own size and
 * SHA-256 (the ETag). Written by raw SQL only (src/downloads/stamped-copy-store.ts).
 */
@Entity({ tableName: 'stamped_copy' })
export class StampedCopy {
  @ManyToOne('Purchase', { primary: true, deleteRule: 'cascade' })
  purchase!: Purchase;

  @ManyToOne(() => VersionFile, { primary: true, deleteRule: 'cascade', index: true })
  file!: VersionFile;

  @Property({ type: 'text' })
  storageKey!: string;

  @Property({ type: new BigIntType('number') })
  size!: number;

  @Property({ type: 'text' })
  sha256!: string;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}
