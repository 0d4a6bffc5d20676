import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique, type Rel } from '@mikro-orm/core';
import type { VersionStatus } from '../domain/statuses';
import { Product } from './product.entity';

@Entity({ tableName: 'product_version' })
@Unique({ properties: ['product', 'version'] })
export class ProductVersion {
  [OptionalProps]?: 'createdAt' | 'status';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Product, { deleteRule: 'cascade' })
  product!: Rel<Product>;

  /** The version label, e.g. "1.2.0". */
  @Property({ type: 'text' })
  version!: string;

  @Property({ type: 'text' })
  status: VersionStatus = 'ready';

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
