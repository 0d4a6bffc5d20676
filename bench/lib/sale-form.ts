/**
 * A sale as `POST /api/purchases` takes it, form-encoded: one product to a new customer, no
 * receipt (the benchmarks time the API's record of it, not the mail).
 */
export function saleForm(productId: string, email: string): string {
  return new URLSearchParams({
    customerId: 'new', 'newCustomer.name': 'Bench Buyer', 'newCustomer.email': email, productId,
    amount: '19.99', currency: 'USD', paymentMethod: 'custom', sendEmail: 'false',
  }).toString();
}
