import type { EntityManager } from '@mikro-orm/postgresql';
import { versionedListingsJson } from '../catalogue/catalogue-store';

interface HeldListing {
  version: string;
  json: string;
}

/** Bytes a listing's text takes in memory (V8 may store it in two bytes per character). */
const bytesOf = (listing: HeldListing) => listing.json.length * 2;

/**
 * GET /api/products' answers per organisation, each kept with the catalogue version it was read
 * at. Every request reads the current version: with its caller (the principal carries it), or else
 * in the one statement that also returns the listing when the version held is not that one. The
 * database's triggers bump the version in the transaction of every change to products, SKUs and
 * versions, so an answer is never older than the request, whichever process or code path made the
 * change: unlike a cache with a lifetime, nothing here can be stale. What it saves is building the listing (about 1 ms of
 * PostgreSQL's CPU for 100 products) on every poll of a catalogue that did not change.
 *
 * Bounded by the bytes held: least recently used listings go first, and a listing bigger than a
 * quarter of the bound is served but not kept.
 */
export class CatalogueListings {
  private readonly held = new Map<string, HeldListing>();
  private heldBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * The JSON text of the organisation's ProductListing[] (`[]` for an organisation with none).
   * `currentVersion`: the organisation's catalogue version read earlier in this request, if any.
   */
  async json(em: EntityManager, orgId: string, currentVersion: string | null): Promise<string> {
    const mine = this.held.get(orgId);
    if (mine && mine.version === currentVersion) {
      this.keep(orgId, mine);
      return mine.json;
    }
    const current = await versionedListingsJson(em, orgId, mine?.version ?? null);
    if (!current) return '[]';
    if (current.listing === null && mine) {
      this.keep(orgId, mine);
      return mine.json;
    }
    // Null only when the version is the one held; the branch above took that case.
    const json = current.listing ?? '[]';
    this.keep(orgId, { version: current.version, json });
    return json;
  }

  private keep(orgId: string, listing: HeldListing): void {
    this.forget(orgId);
    if (bytesOf(listing) > this.maxBytes / 4) return;
    this.held.set(orgId, listing);
    this.heldBytes += bytesOf(listing);
    for (const [oldest] of this.held) {
      if (this.heldBytes <= this.maxBytes) break;
      this.forget(oldest);
    }
  }

  private forget(orgId: string): void {
    const listing = this.held.get(orgId);
    if (!listing) return;
    this.held.delete(orgId);
    this.heldBytes -= bytesOf(listing);
  }
}
