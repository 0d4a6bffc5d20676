import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, type Rel } from '@mikro-orm/core';
import { Organisation } from '../accounts/organisation.entity';
import { ProductVersion } from './product-version.entity';
import { Product } from './product.entity';

/**
 * "Notify buyers" of one version (decisions §12): at most one per version, so a second notify sends
 * nothing new. Progress is read from the sent-email log (one row per recipient, keyed by version
 * and purchase), the workflow's own record of what went out.
 */
@Entity({ tableName: 'version_notification' })
export class VersionNotification {
  [OptionalProps]?: 'createdAt' | 'completedAt' | 'total' | 'startedBy';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Rel<Organisation>;

  @ManyToOne(() => Product, { deleteRule: 'cascade' })
  product!: Rel<Product>;

  @ManyToOne(() => ProductVersion, { deleteRule: 'cascade', unique: true })
  version!: Rel<ProductVersion>;

  /** Buyers to email, counted when notify was asked for. */
  @Property({ type: 'integer' })
  total: number = 0;

  @Property({ type: 'text', nullable: true })
  startedBy: string | null = null;

  @Property({ type: 'text' })
  workflowId!: string;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  completedAt: Date | null = null;
}
