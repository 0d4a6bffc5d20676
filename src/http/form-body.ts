import type { FastifyRequest } from 'fastify';
import { UnsupportedMediaTypeError, ValidationError } from '../domain/errors';

const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * preValidation hook of form routes: only form bodies are accepted (JSON → 415), and multipart
 * fields are gathered into `request.body` so the route's zod schema validates them like any other.
 */
export async function formBodyOnly(request: FastifyRequest): Promise<void> {
  const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!FORM_TYPES.includes(type)) {
    throw new UnsupportedMediaTypeError('send form fields (multipart/form-data or application/x-www-form-urlencoded)');
  }
  if (type === 'multipart/form-data') {
    const fields: Record<string, string> = {};
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        part.file.resume();
        throw new ValidationError(`unexpected file field "${part.fieldname}"`);
      }
      fields[part.fieldname] = String(part.value);
    }
    request.body = fields;
  }
  request.body ??= {};
}
