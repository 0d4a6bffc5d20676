import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CustomerJsonSchema, findCustomers } from '../../../purchases/customer-store';
import { principalOf } from '../../plugins/principal';
import { pageQuery } from './paging';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

export const customerRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/api/customers', {
    config: { access: 'member' },
    schema: {
      summary: 'Customer look-up',
      description: 'With `email`: the customer with that address (case-insensitive), as an array of zero or one. '
        + 'Without: the organisation\'s customers, newest first, 100 per page by default (`limit` up to 1000); '
        + 'the next page starts `after` the id of the last customer of the previous one.',
      tags: ['customers'],
      querystring: z.object({
        email: boundedText(FIELD_LIMITS.email).optional().describe('matched case-insensitively; blank: every customer'),
        ...pageQuery('customers', (limit) => limit.default(100)),
      }),
      response: { 200: z.array(CustomerJsonSchema) },
    },
  }, async (request) => findCustomers(request.em, principalOf(request).orgId, request.query));
};
