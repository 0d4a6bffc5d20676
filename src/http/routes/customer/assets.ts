import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { publicDir } from '../../../project-files';
import { noneMatchHits } from '../../byte-range';
import { CUSTOMER_ASSETS_PREFIX } from '../../views/customer-pages';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/** The customer pages' only assets, by name: nothing in the URL reaches the file system. */
const ASSETS: Record<string, string> = {
  'downloader.js': 'text/javascript; charset=utf-8',
  'customer.css': 'text/css; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Read once at start-up: two small files, served from memory. */
function loadAssets(): Map<string, Asset> {
  const dir = publicDir();
  return new Map(Object.entries(ASSETS).map(([name, type]) => {
    const body = readFileSync(path.join(dir, name));
    return [name, { body, type, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` }];
  }));
}

export function customerAssetRoutes(): FastifyPluginAsyncZod {
  return async (app) => {
    const assets = loadAssets();
    app.get(`${CUSTOMER_ASSETS_PREFIX}/:name`, {
      schema: { hide: true, params: z.object({ name: boundedText(FIELD_LIMITS.id) }) },
    }, async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('not found\n');
      reply.headers({ etag: asset.etag, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' });
      if (noneMatchHits(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  };
}
