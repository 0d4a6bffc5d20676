import { z } from 'zod';
import { fastJsonSerializerCompiler } from '../../../src/http/json-serializer';
import { ProductListingSchema } from '../../../src/services/products';
import { DeliveryJsonSchema } from '../../../src/services/webhook-log';

const serializerOf = (schema: z.ZodType) => fastJsonSerializerCompiler({ schema, method: 'GET', url: '/api/test' });

const listing = {
  product: {
    id: '0d9e4a63-0c7b-4c1e-9a53-6a2f0f0b6a11', orgId: '5b0b1d8e-3f0e-4b7a-8d6c-1f2e3d4c5b6a', name: 'Ünïcode "quoted" \\ line\nbreak',
    slug: 'ebook', description: '', status: 'published', activeVersionId: null, skus: ['a-1', 'b\u0001'], downloadLimit: null,
    licenseKeys: null, stampPdfs: false,
    createdAt: '2026-11-25T22:09:51.123Z', updatedAt: '2026-11-25T22:09:51.123Z',
  },
  activeVersion: null,
};

test('writes what JSON.stringify writes for data of the schema\'s shape, nulls included', () => {
  const withVersion = {
    product: { ...listing.product, activeVersionId: '9f1c2b3a-4d5e-4f60-8a7b-1c2d3e4f5a6b', licenseKeys: { source: 'pool', activationLimit: 3 } },
    activeVersion: { id: '9f1c2b3a-4d5e-4f60-8a7b-1c2d3e4f5a6b', productId: listing.product.id, version: '1.0', status: 'ready' },
  };
  expect(serializerOf(z.array(ProductListingSchema))([listing, withVersion])).toBe(JSON.stringify([listing, withVersion]));
  const delivery = {
    id: 'd1', kind: 'order', platform: 'cart-e', externalOrderId: 'o-1', source: 'reconciliation', status: 'Pending', unmatched: false, test: true,
    items: [{ sku: null, productId: null, outcome: null, reason: null, purchaseId: null }],
    receivedAt: '2026-11-25T22:09:51.123Z', completedAt: null, workflowIds: [],
  };
  expect(serializerOf(z.array(DeliveryJsonSchema))([delivery])).toBe(JSON.stringify([delivery]));
});

test('writes the schema\'s properties only, in the schema\'s order, like the zod serializer', () => {
  const { activeVersion, product } = listing;
  const shuffled = { activeVersion, extra: 'secret', product: { ...product, organisation_id: 'x' } };
  expect(serializerOf(ProductListingSchema)(shuffled)).toBe(JSON.stringify(listing));
});

test('refuses a response schema that is not a zod schema', () => {
  expect(() => serializerOf({ type: 'object' } as unknown as z.ZodType)).toThrow(/zod/);
});
