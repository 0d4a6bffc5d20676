/**
 * What an `unmatched` order line keeps so it can be delivered once its SKU is mapped (decisions §12):
 * the part of the fulfilment input the webhook gave, minus the product, which the mapping decides.
 */
export interface HeldLine {
  customer: { email: string; name: string };
  /** Decimal string with the currency's minor digits. */
  amount: string;
  currency: string;
  test: boolean;
  paymentReference?: string;
}
