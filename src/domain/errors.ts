/**
 * Errors that carry their HTTP meaning. Thrown anywhere below the HTTP layer; the one error
 * handler maps them to statuses and never leaks internals of anything else.
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
export class ValidationError extends DomainError { readonly status = 400; }
export class UnauthorizedError extends DomainError { readonly status = 401; }
export class ForbiddenError extends DomainError { readonly status = 403; }
export class NotFoundError extends DomainError { readonly status = 404; }
export class ConflictError extends DomainError { readonly status = 409; }
export class PayloadTooLargeError extends DomainError { readonly status = 413; }
export class UnsupportedMediaTypeError extends DomainError { readonly status = 415; }
export class UnprocessableError extends DomainError { readonly status = 422; }
/** Not now, from this caller: its own work waits past its share; `Retry-After` says when to come back. */
export class BacklogFullError extends DomainError {
  readonly status = 503;
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}
