import { readFileSync } from 'node:fs';
import path from 'node:path';
import { productSources, ROOT } from '../helpers/source-files';

/**
 * Each table has one owning module (docs/architecture.md, "Persistence"): the only files with SQL
 * are the slices' stores, and a statement that writes a table lives in that table's slice. A new
 * table is added to OWNERS with its slice, or this test says where its SQL went astray.
 */

/** Each table's slice: the directory whose store modules hold its SQL. */
const OWNERS: Record<string, string> = {
  purchase: 'src/purchases', customer: 'src/purchases', download_token: 'src/purchases',
  revocation_notice: 'src/purchases', activity_log_entry: 'src/purchases',
  product: 'src/catalogue', product_version: 'src/catalogue', product_sku: 'src/catalogue',
  version_file: 'src/catalogue', version_notification: 'src/catalogue',
  download_coverage: 'src/downloads', stamped_copy: 'src/downloads',
  organisation: 'src/accounts', app_user: 'src/accounts', user_session: 'src/accounts',
  integration: 'src/accounts', integration_health: 'src/accounts', integration_reconciliation: 'src/accounts', rate_limit_counter: 'src/accounts',
  workflow_dispatch: 'src/outbox',
  webhook_delivery: 'src/deliveries', webhook_delivery_item: 'src/deliveries', unmatched_sku: 'src/deliveries',
  signature_nonce: 'src/deliveries', sent_email: 'src/deliveries',
  outbound_event: 'src/events', outbound_delivery: 'src/events', outbound_attempt: 'src/events', webhook_endpoint: 'src/events',
  outbound_endpoint_lease: 'src/events',
  license_key: 'src/licenses', license_activation: 'src/licenses',
};

/** The SQL texts of a module: its sql`…` templates. */
const sqlTexts = (source: string): string[] => [...source.matchAll(/(?<![`\w])sql`([^`]*)`/g)].map((m) => m[1]);

/** Every entity module of the product. */
const entityFiles = () => productSources().filter((file) => file.endsWith('.entity.ts'));

const isStore = (file: string) => /^src\/[a-z-]+\/[a-z-]+-store\.ts$/.test(file) || file === 'src/events/outbound-events.ts';

test('the schema\'s tables all have an owner', async () => {
  // The entities name every table; one without an owner here is one nobody checks.
  const tables = entityFiles().map((file) => ({ file, table: /tableName: '([a-z_]+)'/.exec(readFileSync(path.join(ROOT, file), 'utf8'))?.[1] }));
  expect(tables.filter((t) => t.table === undefined || !(t.table in OWNERS))).toEqual([]);
});

test('each table\'s entity lives in the slice that owns the table', () => {
  const astray = entityFiles().flatMap((file) => {
    const table = /tableName: '([a-z_]+)'/.exec(readFileSync(path.join(ROOT, file), 'utf8'))?.[1] ?? '';
    return file.startsWith(`${OWNERS[table]}/`) ? [] : [`${file} maps ${table} (owned by ${OWNERS[table]})`];
  });
  expect(astray).toEqual([]);
});

test('only the stores hold SQL, and no module runs raw SQL around them', () => {
  const astray = productSources().filter((file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    if (file === 'src/db/sql.ts') return false;
    return (!isStore(file) && (sqlTexts(text).length > 0 || /\bstatement</.test(text))) || /\.execute\(|legacy-sql|preparedRows/.test(text);
  });
  expect(astray).toEqual([]);
});

test('a statement that writes a table is in that table\'s slice', () => {
  const astray: string[] = [];
  for (const file of productSources().filter(isStore)) {
    for (const text of sqlTexts(readFileSync(path.join(ROOT, file), 'utf8'))) {
      for (const m of text.matchAll(/\b(?:insert\s+into|update|delete\s+from)\s+([a-z_]+)/gi)) {
        const owner = OWNERS[m[1]];
        if (owner !== undefined && !file.startsWith(`${owner}/`)) astray.push(`${file} writes ${m[1]} (owned by ${owner})`);
      }
    }
  }
  expect(astray).toEqual([]);
});
