import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isEmailAddress, normaliseEmail } from '../domain/email';
import { boundedText, FIELD_LIMITS } from '../domain/field-limits';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../domain/errors';
import type { FulfilmentRequest } from '../domain/fulfilment';
import { normaliseAmount, normaliseCurrency } from '../domain/money';
import { isPurchaseSource, PLATFORMS, type PurchaseSource } from '../domain/platforms';
import { isUuid } from '../domain/uuid';
import { saleCheck } from './purchase-store';

/** An optional text field; blank is absent. */
const optionalField = (max: number) => boundedText(max).trim().optional().transform((v) => (v ? v : undefined));
const requiredField = (max: number, message: string) => boundedText(max).trim().min(1, message);

/** The form fields of POST /api/purchases (spec: Purchase-creation input fields). */
export const PurchaseFormSchema = z.object({
  customerId: requiredField(FIELD_LIMITS.id, 'customerId is required ("new" or an existing customer id)'),
  'newCustomer.name': optionalField(FIELD_LIMITS.name),
  'newCustomer.email': optionalField(FIELD_LIMITS.email),
  productId: requiredField(FIELD_LIMITS.id, 'productId is required'),
  amount: requiredField(FIELD_LIMITS.amount, 'amount is required'),
  currency: requiredField(FIELD_LIMITS.currency, 'currency is required'),
  paymentMethod: optionalField(FIELD_LIMITS.paymentMethod).describe('defaults to "custom"'),
  sendEmail: z.enum(['true', 'false']).optional().describe('"true" emails the download link'),
  source: z.enum(PLATFORMS).optional().describe('record a platform order by hand, with externalOrderId'),
  externalOrderId: optionalField(FIELD_LIMITS.orderId),
});
export type PurchaseForm = z.infer<typeof PurchaseFormSchema>;


export interface SaleContext {
  orgId: string;
  /** `api` for a key, `manual` for the dashboard. */
  enteredVia: Extract<PurchaseSource, 'api' | 'manual'>;
}

/** A checked sale: the fulfilment input, and the names its answer shows. */
export interface ValidatedSale {
  sale: FulfilmentRequest;
  customerEmail: string;
  productName: string;
}

/**
 * Checks a sale entered by API or dashboard against the organisation's data (one read) and turns
 * it into the fulfilment input. Every failure is a 4xx with a message that says what to fix.
 */
export async function validateSale(em: EntityManager, form: PurchaseForm, ctx: SaleContext): Promise<ValidatedSale> {
  const currency = normaliseCurrency(form.currency);
  if (!currency) throw new ValidationError('currency must be a three-letter code such as USD');
  const amount = normaliseAmount(form.amount, currency);
  if (amount === null) {
    throw new ValidationError(`amount must be a decimal number in whole ${currency} units, e.g. "19.99"`);
  }
  if ((form.source === undefined) !== (form.externalOrderId === undefined)) {
    throw new ValidationError('source and externalOrderId go together');
  }
  if (!isUuid(form.productId)) throw new NotFoundError('product not found');

  const isNew = form.customerId === 'new';
  const typed = isNew ? form['newCustomer.email'] : undefined;
  const email = typed === undefined ? null : normaliseEmail(typed) || null;
  const customerId = !isNew && isUuid(form.customerId) ? form.customerId : null;
  const found = await saleCheck(em, { orgId: ctx.orgId, productId: form.productId, customerId, email });
  if (!found.product_found) throw new NotFoundError('product not found');

  let customer: FulfilmentRequest['customer'];
  if (isNew) {
    if (!email) throw new ValidationError('newCustomer.email is required when customerId is "new"');
    if (!isEmailAddress(email)) throw new ValidationError('newCustomer.email is not an email address');
    if (found.email_taken) throw new UnprocessableError('a customer with that email already exists');
    customer = { email, name: form['newCustomer.name'] ?? '' };
  } else {
    if (!found.customer_id) throw new NotFoundError('customer not found');
    customer = { id: found.customer_id };
  }
  if (!found.product_live) throw new ConflictError('product is not live');

  const source = form.source ?? ctx.enteredVia;
  if (!isPurchaseSource(source)) throw new ValidationError('unknown source');
  return {
    sale: {
      orgId: ctx.orgId,
      source,
      externalOrderId: form.externalOrderId ?? null,
      productId: form.productId,
      customer,
      amount,
      currency,
      paymentMethod: form.paymentMethod ?? 'custom',
      test: false,
      sendReceipt: form.sendEmail === 'true',
    },
    customerEmail: email ?? found.customer_email!,
    productName: found.product_name!,
  };
}
