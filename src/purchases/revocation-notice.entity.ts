import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { PurchaseSource } from '../domain/platforms';
import type { RevokeReason } from '../domain/statuses';
import { Organisation } from '../accounts/organisation.entity';
import { Product } from '../catalogue/product.entity';

/**
 * A refund or dispute that found no purchase (it came before its order, decisions §9): kept so the
 * order, when it arrives, is recorded revoked and sends no receipt. `orderRef` is the order id, or
 * for payments-c (`refKind` payment) the payment it names; `product` null means the whole order.
 */
@Entity({ tableName: 'revocation_notice' })
@Index({ properties: ['organisation', 'source', 'orderRef'] })
export class RevocationNotice {
  [OptionalProps]?: 'createdAt' | 'product';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  source!: PurchaseSource;

  @Property({ type: 'text' })
  refKind!: 'order' | 'payment';

  @Property({ type: 'text' })
  orderRef!: string;

  @ManyToOne(() => Product, { nullable: true, deleteRule: 'cascade' })
  product: Product | null = null;

  @Property({ type: 'text' })
  reason!: RevokeReason;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
