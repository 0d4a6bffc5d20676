/** Small helpers for the form-encoded platforms (reseller-d-classic, cart-e). */
import { WebhookParseError } from './adapter';

/** A trimmed non-empty form field, or null. */
export function field(form: URLSearchParams, name: string): string | null {
  const value = form.get(name);
  if (value === null) return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

export function requireField(form: URLSearchParams, name: string): string {
  const value = field(form, name);
  if (value === null) throw new WebhookParseError(`form field ${name} is missing`);
  return value;
}
