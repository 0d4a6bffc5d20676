import { randomUUID } from 'node:crypto';
import { BigIntType, Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { DownloadToken } from './download-token.entity';
import { Organisation } from '../accounts/organisation.entity';
import type { Purchase } from './purchase-store';
import { VersionFile } from '../catalogue/version-file.entity';

export const ACTIVITY_KINDS = ['file_download', 'download_session', 'page_open', 'revoke', 'restore', 'rearm', 'download_limit'] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/**
 * The purchase's activity: the download ledger (one `file_download` per completed file transfer,
 * what the report lists; one `download_session` per download-complete call; one `page_open` per
 * link per minute, counting the openings in `occurrences`) and staff actions on it (`revoke`,
 * `restore`, `rearm`, `download_limit`, with who). Read by purchase, kind and time for the download
 * limit, the page opens' de-duplication and the evidence record.
 */
@Entity({ tableName: 'activity_log_entry' })
@Index({ properties: ['organisation', 'kind', 'createdAt'] })
@Index({ properties: ['purchase', 'kind', 'createdAt'] })
export class ActivityLogEntry {
  [OptionalProps]?: 'createdAt' | 'token' | 'file' | 'bytes' | 'ip' | 'userAgent' | 'actor' | 'detail' | 'occurrences';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  kind!: ActivityKind;

  @ManyToOne('Purchase', { deleteRule: 'cascade' })
  purchase!: Purchase;

  @ManyToOne(() => DownloadToken, { nullable: true, deleteRule: 'set null' })
  token: DownloadToken | null = null;

  @ManyToOne(() => VersionFile, { nullable: true, deleteRule: 'set null' })
  file: VersionFile | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  bytes: number | null = null;

  @Property({ type: 'text', nullable: true })
  ip: string | null = null;

  @Property({ type: 'text', nullable: true })
  userAgent: string | null = null;

  /** Staff actions: the email of who did it. */
  @Property({ type: 'text', nullable: true })
  actor: string | null = null;

  /** Staff actions: what was done (a revoke's reason, a re-arm's recipient, a download limit's new value). */
  @Property({ type: 'text', nullable: true })
  detail: string | null = null;

  /** How many times it happened: page opens of one link within a minute share one entry. */
  @Property({ type: 'integer', default: 1 })
  occurrences: number = 1;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
