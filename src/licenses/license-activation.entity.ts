import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { LicenseKey } from './license-key.entity';

/**
 * One installation of a key (decisions §14): its id is the `instanceId` the app keeps. A deactivated
 * one is kept (validate with its id answers `valid: false`), and no longer takes a seat.
 */
@Entity({ tableName: 'license_activation' })
export class LicenseActivation {
  [OptionalProps]?: 'deactivatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => LicenseKey, { deleteRule: 'cascade', index: true })
  licenseKey!: LicenseKey;

  @Property({ type: 'text' })
  instanceName!: string;

  @Property({ type: 'timestamptz' })
  activatedAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  deactivatedAt: Date | null = null;
}
