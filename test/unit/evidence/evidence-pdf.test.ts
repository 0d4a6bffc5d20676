import type { EvidenceRecord } from '../../../src/domain/evidence';
import { formatEvidenceTime, renderEvidencePdf } from '../../../src/evidence/evidence-pdf';
import { PDF_TASKS_AT_ONCE } from '../../../src/threads/pdf-turns';
import { parsePdf, squash, type ParsedPdf, type TextItem } from '../../helpers/pdf-text';

const A4_WIDTH = 595.28;
const MARGIN = 50;

async function extract(record: EvidenceRecord): Promise<{ pdf: Buffer; parsed: ParsedPdf; text: string; items: TextItem[] }> {
  const pdf = await renderEvidencePdf(record);
  const parsed = await parsePdf(pdf);
  return { pdf, parsed, text: squash(parsed.text), items: parsed.items };
}

/** The runs of text that start left of the margin or end right of it: long values must wrap instead. */
function outsideMargins(items: TextItem[]): TextItem[] {
  return items.filter((item) => item.transform[4] < MARGIN - 0.5 || item.transform[4] + item.width > A4_WIDTH - MARGIN + 0.5);
}

const LONG_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) ' +
  'Version/4.0 Chrome/131.0.6778.135 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/489.0.0.66.81;IABMV/1;FBDV/SM-S918B;' +
  'FBLC/en_GB;FBOP/1;FBSN/Android;FBSV/14;FBCA/arm64-v8a:null;FBRV/0;] ExtraTokenWithoutAnySpacesAtAllToForceACharacterBreak0123456789';

function sampleRecord(): EvidenceRecord {
  return {
    generatedAt: '2026-11-27T10:00:00.000Z',
    seller: { organisation: 'Acme Fonts Ltd', supportEmail: 'help@acme.example' },
    purchase: {
      id: '6f1c2d3e-0000-4000-8000-00000000abcd',
      product: 'Grotesk Family',
      version: '2.1',
      createdAt: '2026-11-20T09:14:58.120Z',
      test: false,
      revokedAt: '2026-11-26T16:45:10.000Z',
      revokeReason: 'chargeback opened',
    },
    customer: { name: 'Jane Doe', email: 'jane.doe@example.com' },
    order: {
      source: 'gumroad',
      externalOrderId: 'GR-ORDER-77123',
      amount: '49.00',
      currency: 'EUR',
      paymentMethod: 'card',
      receivedAt: '2026-11-20T09:14:57.900Z',
      deliveries: [
        {
          id: 'dl-1',
          platform: 'gumroad',
          kind: 'sale',
          status: 'done',
          receivedAt: '2026-11-20T09:14:57.900Z',
          completedAt: '2026-11-20T09:14:59.001Z',
          items: [{ sku: 'GROTESK-FAMILY', outcome: 'created', reason: null }],
        },
      ],
    },
    receipts: [
      {
        status: 'accepted',
        acceptedAt: '2026-11-20T09:15:00.500Z',
        messageId: '<receipt-1234@mail.acme.example>',
        recipients: ['jane.doe@example.com'],
        subject: 'Your download: Grotesk Family',
      },
    ],
    reminder: {
      status: 'sent',
      acceptedAt: '2026-11-21T09:15:01.000Z',
      messageId: '<reminder.6f1c2d3e@mail.acme.example>',
      recipients: ['jane.doe@example.com'],
      subject: 'Your download is waiting: Grotesk Family',
    },
    links: [
      { issuedAt: '2026-11-20T09:14:59.500Z', via: 'receipt', expiresAt: '2026-11-22T09:14:59.500Z', usedAt: '2026-11-20T09:20:11.000Z' },
      { issuedAt: '2026-11-24T18:02:03.000Z', via: 'my', expiresAt: '2026-11-26T18:02:03.000Z', usedAt: null },
    ],
    linksNotListed: 0,
    accesses: [
      { at: '2026-11-20T09:15:02.345Z', kind: 'page open', ip: '203.0.113.7', userAgent: 'curl/8.5.0', file: null, bytes: null, count: 3 },
      { at: '2026-11-20T09:15:09.000Z', kind: 'file transfer', ip: '2001:db8:85a3::8a2e:370:7334', userAgent: LONG_USER_AGENT, file: 'Grotesk-Family.zip', bytes: 18_734_112, count: 1 },
      { at: '2026-11-20T09:20:11.000Z', kind: 'download complete', ip: '203.0.113.7', userAgent: null, file: null, bytes: null, count: 1 },
    ],
    accessesNotListed: 0,
    staffActions: [{ at: '2026-11-26T16:45:10.000Z', action: 'revoke', by: 'owner@acme.example', detail: 'chargeback opened' }],
    license: {
      key: 'K7M2Q-9XW4T-R3HBN-6PZ8C',
      status: 'revoked',
      activationLimit: 2,
      activations: [
        { instanceId: '1d2e3f40-0000-4000-8000-000000000001', instanceName: 'Jane\'s MacBook', activatedAt: '2026-11-20T09:30:00.000Z', deactivatedAt: null },
        { instanceId: '1d2e3f40-0000-4000-8000-000000000002', instanceName: 'Studio PC', activatedAt: '2026-11-21T11:00:00.000Z', deactivatedAt: '2026-11-22T08:00:00.000Z' },
      ],
      activationsNotListed: 0,
    },
  };
}

test('times read as YYYY-MM-DD HH:MM:SS UTC', () => {
  expect(formatEvidenceTime('2026-11-20T09:15:02.345Z')).toBe('2026-11-20 09:15:02 UTC');
  expect(formatEvidenceTime('2026-11-20T10:15:02+01:00')).toBe('2026-11-20 09:15:02 UTC');
});

test('the record renders as a readable PDF with every section and the facts a dispute needs', async () => {
  const record = sampleRecord();
  const { pdf, parsed, text, items } = await extract(record);

  expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(parsed.info).toMatchObject({ Title: `Dispute evidence: purchase ${record.purchase.id}`, Author: 'Acme Fonts Ltd' });
  for (const heading of ['Dispute evidence', 'Order as received', 'Customer', 'Receipt', 'Reminder to download', 'Download links issued', 'Page opens and file transfers', 'Staff actions', 'Revocation']) {
    expect(text).toContain(heading);
  }
  expect(text).toContain('GR-ORDER-77123');
  expect(text).toContain('49.00 EUR');
  expect(text).toContain('GROTESK-FAMILY');
  expect(text).toContain('jane.doe@example.com');
  expect(text).toContain('<receipt-1234@mail.acme.example>');
  expect(text).toContain('2026-11-20 09:15:00 UTC'); // accepted by SMTP
  expect(text).toContain('<reminder.6f1c2d3e@mail.acme.example>');
  expect(text).toContain('2026-11-21 09:15:01 UTC');
  for (const access of record.accesses) expect(text).toContain(formatEvidenceTime(access.at));
  for (const link of record.links) expect(text).toContain(formatEvidenceTime(link.issuedAt));
  expect(text).toContain('18,734,112');
  expect(text).toContain('page open (3 times)');
  expect(text).toContain('Access was revoked at 2026-11-26 16:45:10 UTC');
  // The key and every installation of it, with when each was activated and deactivated.
  expect(text).toContain('License key');
  expect(text).toContain('K7M2Q-9XW4T-R3HBN-6PZ8C');
  expect(text).toContain('Studio PC');
  expect(text).toContain('2026-11-22 08:00:00 UTC');
  expect(text).toContain(`Page 1 of ${parsed.numpages}`);
  // The long user agent wraps inside its column rather than running off the page or being cut.
  expect(parsed.text.replace(/\s+/g, '')).toContain(LONG_USER_AGENT.replace(/\s+/g, ''));
  expect(text).not.toContain(squash(LONG_USER_AGENT));
  expect(outsideMargins(items)).toEqual([]);

  // The same record renders to the same bytes: the creation date and file ID come from generatedAt.
  expect((await renderEvidencePdf(record)).equals(pdf)).toBe(true);
});

test('300 accesses flow onto further pages, every one of them shown', async () => {
  const record = sampleRecord();
  const start = Date.parse('2026-11-21T00:00:00.000Z');
  record.accesses = Array.from({ length: 300 }, (_, i) => ({
    at: new Date(start + i * 61_000).toISOString(),
    kind: i % 2 === 0 ? ('page open' as const) : ('file transfer' as const),
    ip: `198.51.100.${i % 250}`,
    userAgent: i % 7 === 0 ? LONG_USER_AGENT : 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    file: i % 2 === 0 ? null : 'Grotesk-Family.zip',
    bytes: i % 2 === 0 ? null : 1_000 + i,
    count: 1,
  }));
  const { parsed, text, items } = await extract(record);

  expect(parsed.numpages).toBeGreaterThan(1);
  expect(outsideMargins(items)).toEqual([]);
  expect(text).toContain(`Page ${parsed.numpages} of ${parsed.numpages}`);
  for (const access of record.accesses) expect(text).toContain(formatEvidenceTime(access.at));
});

test('the PDF is drawn off the main thread: its event loop turns while a long record renders', async () => {
  await renderEvidencePdf(sampleRecord()); // pdfkit loaded: what follows is drawing only
  const record = sampleRecord();
  record.accesses = Array.from({ length: 200 }, (_, i) => ({ ...sampleRecord().accesses[1], at: new Date(Date.UTC(2026, 10, 21) + i * 1000).toISOString() }));
  const order: string[] = [];
  const rendering = renderEvidencePdf(record).then(() => order.push('pdf'));
  await new Promise((resolve) => setImmediate(resolve));
  order.push('event loop');
  await rendering;
  expect(order).toEqual(['event loop', 'pdf']);
});

test('a drawing that outlasts its timeout ends the worker and answers 503', async () => {
  await expect(renderEvidencePdf(sampleRecord(), 1)).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/too long/) });
});

test('PDFs asked many at once: one a core draws, as many wait, the rest are refused at once with 503', async () => {
  const record = sampleRecord();
  const outcomes = await Promise.allSettled(Array.from({ length: 16 }, () => renderEvidencePdf(record)));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2 * PDF_TASKS_AT_ONCE);
  for (const refused of outcomes.filter((o) => o.status === 'rejected')) {
    expect(refused.reason).toMatchObject({ status: 503, message: expect.stringMatching(/too many evidence PDFs/) });
  }
});

test('a record that leaves older accesses, links or installations out says how many', async () => {
  const record = sampleRecord();
  record.accessesNotListed = 2_801;
  record.linksNotListed = 12;
  record.license!.activationsNotListed = 11_800;
  const { text } = await extract(record);
  expect(text).toContain('The newest 3 entries; 2,801 older entries are not listed.');
  expect(text).toContain('The newest 2 links; 12 older links are not listed.');
  expect(text).toContain('The newest 2 installations; 11,800 older installations are not listed.');
});

test('a record with nothing to list says so in each section', async () => {
  const record = sampleRecord();
  record.order.deliveries = [];
  record.receipts = [];
  record.links = [];
  record.accesses = [];
  record.staffActions = [];
  record.license = { ...record.license!, activations: [] };
  record.purchase.revokedAt = null;
  record.purchase.revokeReason = null;
  const { text } = await extract(record);

  expect(text).toContain('No receipt was sent.');
  expect(text).toContain('No download link was issued.');
  expect(text).toContain('No page opens or file transfers were recorded.');
  expect(text).toContain('No staff actions.');
  expect(text).toContain('No delivery log entry');
  expect(text).toContain('The key was never activated.');
  expect(text).not.toContain('Revocation');
});
