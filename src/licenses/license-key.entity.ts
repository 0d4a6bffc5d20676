import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Organisation } from '../accounts/organisation.entity';
import { Product } from '../catalogue/product.entity';
import type { Purchase } from '../purchases/purchase-store';

/**
 * A license key (decisions §14): generated with its purchase, or uploaded to a product's pool and
 * issued to a purchase later. Unique as text across the service (the public license API finds a
 * key by its text alone) and per purchase (one key each, whatever the retries).
 */
@Entity({ tableName: 'license_key' })
@Index({ properties: ['product', 'purchase', 'createdAt'] })
export class LicenseKey {
  [OptionalProps]?: 'createdAt' | 'purchase' | 'issuedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @ManyToOne(() => Product, { deleteRule: 'cascade' })
  product!: Product;

  @Property({ type: 'text', unique: true })
  key!: string;

  /** Null while the key waits in its product's pool. */
  @ManyToOne('Purchase', { nullable: true, deleteRule: 'cascade', unique: true })
  purchase: Purchase | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  issuedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
