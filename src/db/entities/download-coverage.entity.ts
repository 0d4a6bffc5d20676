import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * The bytes of one file served to one link since its last completed transfer, as a PostgreSQL
 * int8multirange of half-open byte ranges. A transfer counts in the downloads ledger only when the
 * ranges served cover the whole file; the row is then cleared. Written by raw SQL only.
 */
@Entity({ tableName: 'download_coverage' })
export class DownloadCoverage {
  @PrimaryKey({ type: 'uuid' })
  tokenId!: string;

  @PrimaryKey({ type: 'uuid' })
  fileId!: string;

  @Property({ columnType: 'int8multirange', type: 'string' })
  served!: string;

  /** Housekeeping deletes coverage left idle for long (a transfer nobody finished). */
  @Index()
  @Property({ type: 'timestamptz' })
  updatedAt!: Date;
}
