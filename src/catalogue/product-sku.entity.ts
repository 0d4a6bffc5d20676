import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Organisation } from '../accounts/organisation.entity';
import { Product } from './product.entity';

/**
 * Every SKU that maps to a product: its slug (isSlug) and its extra SKUs, normalised. The unique
 * key makes "a SKU maps to at most one product per organisation" a database guarantee.
 */
@Entity({ tableName: 'product_sku' })
@Unique({ properties: ['organisation', 'sku'] })
export class ProductSku {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @ManyToOne(() => Product, { deleteRule: 'cascade', index: true })
  product!: Product;

  /** Trimmed and lower-case. */
  @Property({ type: 'text' })
  sku!: string;

  @Property({ type: 'boolean' })
  isSlug!: boolean;
}
