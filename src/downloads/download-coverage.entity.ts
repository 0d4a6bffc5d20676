import { BigIntType, Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * What one purchase was sent of one file, whichever of its links asked (decisions §10: the limit
 * is the purchase's). `served`: the byte ranges sent since the last completed transfer, as a
 * PostgreSQL int8multirange of half-open ranges, kept to a few merged ranges; a transfer counts in
 * the downloads ledger when they cover the whole file, and they are then cleared. `bytesSent`:
 * every byte sent since the purchase or its last re-arm, the budget a download limit also caps.
 * `transferOpen`: bytes were reserved for a transfer that has not yet covered the file.
 * Written by raw SQL only (src/services/downloads.ts).
 */
@Entity({ tableName: 'download_coverage' })
export class DownloadCoverage {
  @PrimaryKey({ type: 'uuid' })
  purchaseId!: string;

  @PrimaryKey({ type: 'uuid' })
  fileId!: string;

  @Property({ columnType: 'int8multirange', type: 'string' })
  served!: string;

  @Property({ type: new BigIntType('number'), default: 0 })
  bytesSent!: number;

  /**
   * A transfer of the file was started and has not finished: it holds a place under the
   * purchase's download limit until it finishes, or housekeeping finds it idle.
   */
  @Property({ default: false })
  transferOpen!: boolean;

  /** Housekeeping clears coverage left idle for long (a transfer nobody finished); the bytes sent stay. */
  @Index()
  @Property({ type: 'timestamptz' })
  updatedAt!: Date;
}
