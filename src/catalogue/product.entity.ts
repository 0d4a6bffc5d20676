import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import type { LicenseSource } from '../domain/license-keys';
import type { ProductStatus } from '../domain/statuses';
import { Organisation } from '../accounts/organisation.entity';
import { ProductVersion } from './product-version.entity';

@Entity({ tableName: 'product' })
@Unique({ properties: ['organisation', 'slug'] })
export class Product {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'status' | 'description' | 'activeVersion' | 'downloadLimit' | 'licenseSource'
    | 'licenseActivationLimit' | 'licenseLowWarned' | 'licenseDryAlerted' | 'stampPdfs';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text' })
  slug!: string;

  @Property({ type: 'text' })
  description: string = '';

  @Property({ type: 'text' })
  status: ProductStatus = 'draft';

  @ManyToOne(() => ProductVersion, { nullable: true, deleteRule: 'set null' })
  activeVersion: ProductVersion | null = null;

  /** Completed file transfers allowed per purchase (decisions §10); null = unlimited. */
  @Property({ type: 'integer', nullable: true })
  downloadLimit: number | null = null;

  /** Where its purchases' license keys come from (decisions §14); null = no keys. */
  @Property({ type: 'text', nullable: true })
  licenseSource: LicenseSource | null = null;

  /** Activations allowed per key; null = unlimited. */
  @Property({ type: 'integer', nullable: true })
  licenseActivationLimit: number | null = null;

  /** The low-pool warning went out and the pool has not been back at the threshold since. */
  @Property({ type: 'boolean' })
  licenseLowWarned: boolean = false;

  /** The empty-pool alert went out and no key has been added since. */
  @Property({ type: 'boolean' })
  licenseDryAlerted: boolean = false;

  /** Its PDFs are served to each buyer stamped with their address and order (decisions §16). */
  @Property({ type: 'boolean' })
  stampPdfs: boolean = false;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
