import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import type { PurchaseSource } from '../domain/platforms';
import type { ReceiptStatus, RevokeReason } from '../domain/statuses';
import { Customer } from './customer.entity';
import { Organisation } from '../accounts/organisation.entity';
import { ProductVersion } from '../catalogue/product-version.entity';
import { Product } from '../catalogue/product.entity';

/**
 * The lasting de-duplication guarantee (decisions §5): one purchase per organisation, source,
 * external order id and product, whatever Temporal still remembers.
 */
@Entity({ tableName: 'purchase' })
@Unique({ properties: ['organisation', 'source', 'externalOrderId', 'product'] })
@Index({ properties: ['organisation', 'createdAt'] })
@Index({ properties: ['organisation', 'source', 'paymentReference'] })
export class Purchase {
  [OptionalProps]?: 'createdAt' | 'test' | 'receiptStatus' | 'receiptSentAt' | 'externalOrderId' | 'version' | 'paymentReference'
    | 'revokedAt' | 'revokeReason' | 'restoredAt' | 'downloadLimit' | 'downloadsCountedFrom'
    | 'licenseWanted' | 'reminderDueAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @ManyToOne(() => Product, { deleteRule: 'cascade' })
  product!: Product;

  /** The version that was active when the sale was recorded: what the customer downloads. */
  @ManyToOne(() => ProductVersion, { nullable: true, deleteRule: 'set null' })
  version: ProductVersion | null = null;

  @ManyToOne(() => Customer, { deleteRule: 'cascade', index: true })
  customer!: Customer;

  /** Decimal string in whole currency units with the currency's minor digits. */
  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'text' })
  currency!: string;

  @Property({ type: 'text' })
  paymentMethod!: string;

  @Property({ type: 'text' })
  source!: PurchaseSource;

  @Property({ type: 'text', nullable: true })
  externalOrderId: string | null = null;

  @Property({ type: 'boolean' })
  test: boolean = false;

  @Property({ type: 'text' })
  receiptStatus: ReceiptStatus = 'pending';

  @Property({ type: 'timestamptz', nullable: true })
  receiptSentAt: Date | null = null;

  /** payments-c: the payment (`payment_intent`) its refund and dispute events name. */
  @Property({ type: 'text', nullable: true })
  paymentReference: string | null = null;

  /** Set when access was withdrawn (decisions §9); links and file URLs then answer 410. */
  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  revokeReason: RevokeReason | null = null;

  /** The last time staff restored access: refund and dispute events from before it are ignored. */
  @Property({ type: 'timestamptz', nullable: true })
  restoredAt: Date | null = null;

  /** Completed file transfers allowed (decisions §10); null = the product's limit. */
  @Property({ type: 'integer', nullable: true })
  downloadLimit: number | null = null;

  /** Re-arm resets the count: only transfers completed after this time count toward the limit. */
  @Property({ type: 'timestamptz', nullable: true })
  downloadsCountedFrom: Date | null = null;

  /** Its product issued license keys when it was recorded (decisions §14): it has a key, or waits for one. */
  @Property({ type: 'boolean' })
  licenseWanted: boolean = false;

  /**
   * When the buyer is reminded if no file transfer completed by then (decisions §16): set when the
   * receipt is first accepted, from the organisation's setting of that moment; null: no reminder.
   */
  @Property({ type: 'timestamptz', nullable: true })
  reminderDueAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
