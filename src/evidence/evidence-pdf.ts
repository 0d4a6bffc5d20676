import path from 'node:path';
import type PDFKitDocument from 'pdfkit';
import { accessLabel, LINK_ORIGIN_LABELS, type EvidenceEmail, type EvidenceRecord } from '../domain/evidence';
import { inPdfTurn, PDF_TASKS_AT_ONCE } from '../threads/pdf-turns';
import { runWorkerTask } from '../threads/worker-task';

/**
 * The dispute evidence record rendered as a PDF a person reads (decisions §11): A4, pdfkit's
 * built-in Helvetica (no font files to ship), headed sections, table-like lists that wrap long
 * values and flow onto further pages with their column headings repeated, "Page n of m" footers.
 * Drawn in a worker thread: pdfkit lays out synchronously, and an API process's event loop must
 * keep answering (/healthz, downloads) while it does.
 */

/** Longer than any record of EVIDENCE_ACCESS_ROWS accesses takes; past it the worker is ended and the request answered 503. */
export const EVIDENCE_PDF_TIMEOUT_MS = 20_000;

/** A record of at most EVIDENCE_ACCESS_ROWS rows a list is drawn in a few MB; a bound, not a budget. */
const EVIDENCE_HEAP_MB = 256;

/**
 * Renders the record in a worker thread (evidence-pdf-worker.ts), in its turn with the process's
 * other PDF work: a 503 when it takes longer than `timeoutMs`, or at once when as many PDFs as there
 * are cores already wait (requests sent many at once cannot take every core and heap of the process
 * that answers every organisation's webhooks and downloads).
 */
export async function renderEvidencePdf(record: EvidenceRecord, timeoutMs = EVIDENCE_PDF_TIMEOUT_MS): Promise<Buffer> {
  const pdf = await inPdfTurn(() => runWorkerTask<EvidenceRecord, Uint8Array>({
    entry: path.join(__dirname, 'evidence-pdf-worker'), input: record, timeoutMs,
    tooLong: 'the evidence PDF took too long to draw; the JSON record has the same facts',
    resourceLimits: { maxOldGenerationSizeMb: EVIDENCE_HEAP_MB },
  }), { maxWaiting: PDF_TASKS_AT_ONCE, busy: 'too many evidence PDFs are being drawn at once; try again in a moment (the JSON record has the same facts)' });
  return Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
}

type Doc = PDFKit.PDFDocument;

const MARGIN = 50;
/** Room under the content for the footer line. */
const BOTTOM_MARGIN = 64;
const BODY_SIZE = 9;
const TABLE_SIZE = 8;
const CELL_PAD = 3;
/** Room a section heading takes: the gap above it, the 13 pt line and its rule. */
const HEADING_HEIGHT = 40;
const RULE_COLOUR = '#b0b0b0';
const HEADER_FILL = '#ececec';
const MUTED = '#555555';
/** A free-text value longer than this (a hostile user agent, say) is cut so one row always fits on a page; the JSON record keeps it whole. */
const MAX_CELL_CHARS = 1000;
const NONE = '—';

interface Column {
  header: string;
  width: number;
  align?: 'left' | 'right';
  bold?: boolean;
}

/** Draws the record on the calling thread: the worker's job (evidence-pdf-worker.ts). */
export async function drawEvidencePdf(record: EvidenceRecord): Promise<Buffer> {
  const generatedAt = new Date(record.generatedAt);
  // Loaded on the first PDF asked for: pdfkit and its fonts cost every API process about 24 MB of
  // memory, and few of them ever draw a PDF.
  const PDFDocument = (await import('pdfkit')).default as typeof PDFKitDocument;
  const doc = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: BOTTOM_MARGIN },
    // Kept in memory until the end so the footers can say how many pages there are.
    bufferPages: true,
    info: {
      Title: text(`Dispute evidence: purchase ${record.purchase.id}`),
      Author: text(record.seller.organisation),
      Subject: 'Dispute evidence record',
      // pdfkit derives the file ID from the info dictionary: a fixed date makes the same record render to the same bytes.
      ...(Number.isNaN(generatedAt.getTime()) ? {} : { CreationDate: generatedAt }),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  title(doc, record);
  orderSection(doc, record);
  customerSection(doc, record);
  receiptSection(doc, record);
  reminderSection(doc, record);
  linksSection(doc, record);
  accessesSection(doc, record);
  staffSection(doc, record);
  licenseSection(doc, record);
  if (record.purchase.revokedAt !== null) revocationSection(doc, record.purchase.revokedAt, record.purchase.revokeReason);
  footers(doc, record);

  doc.end();
  return done;
}

function title(doc: Doc, record: EvidenceRecord): void {
  doc.font('Helvetica-Bold').fontSize(20).fillColor('black').text('Dispute evidence', MARGIN, MARGIN);
  doc.moveDown(0.4);
  const { seller, purchase } = record;
  const product = purchase.version === null ? purchase.product : `${purchase.product} (version ${purchase.version})`;
  keyValues(doc, [
    ['Seller', seller.supportEmail === null ? seller.organisation : `${seller.organisation} (${seller.supportEmail})`],
    ['Purchase', purchase.id],
    ['Product', product],
    ['Purchase created', time(purchase.createdAt)],
    ...(purchase.test ? [['Test purchase', 'yes: made in test mode, no money changed hands'] as [string, string]] : []),
    ['Generated at', time(record.generatedAt)],
  ]);
}

function orderSection(doc: Doc, record: EvidenceRecord): void {
  const { order } = record;
  heading(doc, 'Order as received');
  keyValues(doc, [
    ['Platform', order.source],
    ['Order id', order.externalOrderId ?? NONE],
    ['Amount', `${order.amount} ${order.currency}`],
    ['Payment method', order.paymentMethod],
    ['Received at', time(order.receivedAt)],
  ]);
  if (order.deliveries.length === 0) {
    note(doc, 'No delivery log entry for this order (API and dashboard sales have none).');
    return;
  }
  for (const entry of order.deliveries) {
    subheading(doc, `Delivery log entry ${entry.id}`);
    keyValues(doc, [
      ['Platform', entry.platform],
      ['Kind', entry.kind],
      ['Status', entry.status],
      ['Received at', time(entry.receivedAt)],
      ['Completed at', entry.completedAt === null ? 'not completed' : time(entry.completedAt)],
    ]);
    if (entry.items.length === 0) {
      note(doc, 'No items in this entry.');
      continue;
    }
    table(
      doc,
      [
        { header: 'SKU', width: 140 },
        { header: 'Outcome', width: 110 },
        { header: 'Reason', width: contentWidth(doc) - 250 },
      ],
      entry.items.map((item) => [item.sku ?? NONE, item.outcome ?? NONE, item.reason ?? NONE]),
    );
  }
}

function customerSection(doc: Doc, record: EvidenceRecord): void {
  heading(doc, 'Customer');
  keyValues(doc, [
    ['Name', record.customer.name],
    ['Email', record.customer.email],
  ]);
}

function emailFacts(doc: Doc, email: EvidenceEmail): void {
  keyValues(doc, [
    ['Status', email.status],
    ['Accepted by SMTP at', email.acceptedAt === null ? 'not accepted' : time(email.acceptedAt)],
    ['Message id', email.messageId ?? NONE],
    ['Recipients', email.recipients.length === 0 ? NONE : email.recipients.join(', ')],
    ['Subject', email.subject],
  ]);
}

function receiptSection(doc: Doc, record: EvidenceRecord): void {
  heading(doc, 'Receipt');
  if (record.receipts.length === 0) {
    note(doc, 'No receipt was sent.');
    return;
  }
  record.receipts.forEach((receipt, index) => {
    if (record.receipts.length > 1) subheading(doc, `Receipt ${index + 1} of ${record.receipts.length}`);
    emailFacts(doc, receipt);
  });
}

/** Only when one was sent or tried: most purchases are downloaded before their reminder is due. */
function reminderSection(doc: Doc, record: EvidenceRecord): void {
  if (record.reminder === null) return;
  heading(doc, 'Reminder to download');
  emailFacts(doc, record.reminder);
}

function linksSection(doc: Doc, record: EvidenceRecord): void {
  const columns: Column[] = [
    { header: 'Issued at', width: 125 },
    { header: 'How', width: contentWidth(doc) - 3 * 125 },
    { header: 'Expires', width: 125 },
    { header: 'Used', width: 125 },
  ];
  const cells = record.links.map((link) => [
    time(link.issuedAt),
    LINK_ORIGIN_LABELS[link.via] ?? link.via,
    time(link.expiresAt),
    link.usedAt === null ? 'not used' : time(link.usedAt),
  ]);
  listSection(doc, 'Download links issued', columns, cells, 'No download link was issued.');
  notListed(doc, record.links.length, record.linksNotListed, 'links');
}

/** The line under a list that shows only the newest rows: how many older ones it leaves out. */
function notListed(doc: Doc, shown: number, left: number, what: string): void {
  if (left <= 0) return;
  doc.y += 4;
  note(doc, `The newest ${groupDigits(shown)} ${what}; ${groupDigits(left)} older ${what} are not listed.`);
}

function accessesSection(doc: Doc, record: EvidenceRecord): void {
  // Times, kinds, addresses, files and sizes are short; whatever width is left goes to the user agent, which wraps.
  const fixed = 100 + 60 + 84 + 74 + 60;
  const columns: Column[] = [
    { header: 'At', width: 100 },
    { header: 'Kind', width: 60 },
    { header: 'IP', width: 84 },
    { header: 'User agent', width: contentWidth(doc) - fixed },
    { header: 'File', width: 74 },
    { header: 'Bytes', width: 60, align: 'right' },
  ];
  const cells = record.accesses.map((access) => [
    time(access.at),
    accessLabel(access),
    access.ip ?? NONE,
    access.userAgent ?? NONE,
    access.file ?? NONE,
    access.bytes === null ? NONE : groupDigits(access.bytes),
  ]);
  listSection(doc, 'Page opens and file transfers', columns, cells, 'No page opens or file transfers were recorded.');
  notListed(doc, record.accesses.length, record.accessesNotListed, 'entries');
}

function staffSection(doc: Doc, record: EvidenceRecord): void {
  const columns: Column[] = [
    { header: 'At', width: 102 },
    { header: 'Action', width: 80 },
    { header: 'By', width: 130 },
    { header: 'Detail', width: contentWidth(doc) - 312 },
  ];
  const cells = record.staffActions.map((action) => [time(action.at), action.action, action.by ?? NONE, action.detail ?? NONE]);
  listSection(doc, 'Staff actions', columns, cells, 'No staff actions.');
}

function licenseSection(doc: Doc, record: EvidenceRecord): void {
  const { license } = record;
  if (license === null) return;
  heading(doc, 'License key');
  keyValues(doc, [
    ['Key', license.key],
    ['Status', license.status],
    ['Activation limit', license.activationLimit === null ? 'unlimited' : String(license.activationLimit)],
  ]);
  const columns: Column[] = [
    { header: 'Installation', width: contentWidth(doc) - 3 * 110 },
    { header: 'Instance id', width: 110 },
    { header: 'Activated at', width: 110 },
    { header: 'Deactivated at', width: 110 },
  ];
  const cells = license.activations.map((a) => [
    a.instanceName, a.instanceId, time(a.activatedAt), a.deactivatedAt === null ? 'active' : time(a.deactivatedAt),
  ]);
  listSection(doc, 'License activations', columns, cells, 'The key was never activated.');
  notListed(doc, license.activations.length, license.activationsNotListed, 'installations');
}

/** A headed table, or its empty-state line when there is nothing to list. */
function listSection(doc: Doc, label: string, columns: Column[], cells: string[][], empty: string): void {
  if (cells.length === 0) {
    heading(doc, label);
    note(doc, empty);
    return;
  }
  const prepared = prepare(cells);
  // The heading stays on the page of the table's column headings and first row.
  heading(doc, label, leadHeight(doc, columns, prepared, TABLE));
  rows(doc, columns, prepared, TABLE);
}

function revocationSection(doc: Doc, revokedAt: string, reason: string | null): void {
  heading(doc, 'Revocation');
  paragraph(doc, `Access was revoked at ${time(revokedAt)}${reason === null ? '.' : `. Reason: ${reason}`}`);
}

/** "Page n of m" on every page, drawn once the page count is known. */
function footers(doc: Doc, record: EvidenceRecord): void {
  const range = doc.bufferedPageRange();
  for (let index = range.start; index < range.start + range.count; index++) {
    doc.switchToPage(index);
    // The footer sits in the bottom margin: lift the margin while drawing, or pdfkit would start a new page.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const y = doc.page.height - BOTTOM_MARGIN + 24;
    const width = contentWidth(doc);
    doc.font('Helvetica').fontSize(TABLE_SIZE).fillColor(MUTED);
    doc.text(text(`Dispute evidence: purchase ${record.purchase.id}`), MARGIN, y, { width, align: 'left', lineBreak: false });
    doc.text(`Page ${index - range.start + 1} of ${range.count}`, MARGIN, y, { width, align: 'right', lineBreak: false });
    doc.page.margins.bottom = bottom;
  }
  doc.fillColor('black');
}

/** A section heading, kept on the page of what follows it (`keepWith`: the height of that). */
function heading(doc: Doc, label: string, keepWith = 3 * BODY_SIZE): void {
  doc.y += 14;
  ensureRoom(doc, HEADING_HEIGHT - 14 + keepWith);
  doc.font('Helvetica-Bold').fontSize(13).fillColor('black').text(label, MARGIN, doc.y, { width: contentWidth(doc) });
  const y = doc.y + 2;
  doc.save().moveTo(MARGIN, y).lineTo(MARGIN + contentWidth(doc), y).lineWidth(0.75).strokeColor(RULE_COLOUR).stroke().restore();
  doc.y = y + 6;
}

function subheading(doc: Doc, label: string): void {
  doc.y += 6;
  ensureRoom(doc, 40);
  doc.font('Helvetica-Bold').fontSize(10).fillColor('black').text(text(label), MARGIN, doc.y, { width: contentWidth(doc) });
  doc.moveDown(0.2);
}

function paragraph(doc: Doc, value: string): void {
  doc.font('Helvetica').fontSize(BODY_SIZE).fillColor('black').text(text(value), MARGIN, doc.y, { width: contentWidth(doc) });
}

/** An empty-state line, muted so it reads as a statement about the record rather than data. */
function note(doc: Doc, value: string): void {
  doc.font('Helvetica-Oblique').fontSize(BODY_SIZE).fillColor(MUTED).text(value, MARGIN, doc.y, { width: contentWidth(doc) });
  doc.fillColor('black');
}

interface RowStyle {
  fontSize: number;
  /** Space above and below the text in a row. */
  padY: number;
  header: boolean;
  ruled: boolean;
}

const TABLE: RowStyle = { fontSize: TABLE_SIZE, padY: CELL_PAD, header: true, ruled: true };
const PAIRS: RowStyle = { fontSize: BODY_SIZE, padY: 1, header: false, ruled: false };

/** Label/value pairs: bold labels in a narrow column, values wrapping in the rest. */
function keyValues(doc: Doc, pairs: Array<[string, string]>): void {
  const columns: Column[] = [
    { header: '', width: 120, bold: true },
    { header: '', width: contentWidth(doc) - 120 },
  ];
  rows(doc, columns, prepare(pairs), PAIRS);
}

function table(doc: Doc, columns: Column[], cells: string[][]): void {
  rows(doc, columns, prepare(cells), TABLE);
}

/** Cell values as the page shows them: drawable characters, free text cut to a length that fits a page. */
function prepare(cells: string[][]): string[][] {
  return cells.map((row) => row.map((value) => text(clip(value))));
}

function fontFor(doc: Doc, style: RowStyle, bold: boolean): void {
  doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(style.fontSize).fillColor('black');
}

/** A row is as tall as its tallest wrapped cell. */
function rowHeight(doc: Doc, columns: Column[], row: string[], style: RowStyle, bold: (column: Column) => boolean): number {
  const heights = row.map((value, i) => {
    fontFor(doc, style, bold(columns[i]));
    return doc.heightOfString(value, { width: columns[i].width - 2 * CELL_PAD });
  });
  return Math.max(...heights) + 2 * style.padY;
}

const boldColumn = (column: Column): boolean => column.bold === true;
const headerRow = (columns: Column[]): string[] => columns.map((column) => column.header);

/** The column headings and the first row: what must fit below a heading for the heading to stay put. */
function leadHeight(doc: Doc, columns: Column[], cells: string[][], style: RowStyle): number {
  const header = style.header ? rowHeight(doc, columns, headerRow(columns), style, () => true) : 0;
  return header + (cells.length > 0 ? rowHeight(doc, columns, cells[0], style, boldColumn) : 0);
}

/**
 * Lays out rows cell by cell; a row that would cross the bottom margin starts a new page, which
 * repeats the column headings so a reader on page 5 still knows what each column is.
 */
function rows(doc: Doc, columns: Column[], cells: string[][], style: RowStyle): void {
  const width = columns.reduce((sum, column) => sum + column.width, 0);

  const draw = (row: string[], height: number, bold: (column: Column) => boolean, fill?: string): void => {
    const top = doc.y;
    if (fill !== undefined) doc.save().rect(MARGIN, top, width, height).fill(fill).restore();
    let x = MARGIN;
    row.forEach((value, i) => {
      const column = columns[i];
      fontFor(doc, style, bold(column));
      doc.text(value, x + CELL_PAD, top + style.padY, { width: column.width - 2 * CELL_PAD, align: column.align ?? 'left' });
      x += column.width;
    });
    if (style.ruled) {
      doc.save().moveTo(MARGIN, top + height).lineTo(MARGIN + width, top + height).lineWidth(0.5).strokeColor(RULE_COLOUR).stroke().restore();
    }
    doc.x = MARGIN;
    doc.y = top + height;
  };

  const headers = headerRow(columns);
  const headerHeight = style.header ? rowHeight(doc, columns, headers, style, () => true) : 0;
  const drawHeader = (): void => {
    if (style.header) draw(headers, headerHeight, () => true, HEADER_FILL);
  };

  // The column headings go onto the page of the first row, never alone at a page's foot.
  ensureRoom(doc, leadHeight(doc, columns, cells, style));
  drawHeader();
  for (const row of cells) {
    const height = rowHeight(doc, columns, row, style, boldColumn);
    if (doc.y + height > pageBottom(doc)) {
      doc.addPage();
      drawHeader();
    }
    draw(row, height, boldColumn);
  }
}

function ensureRoom(doc: Doc, height: number): void {
  if (doc.y + height > pageBottom(doc)) doc.addPage();
}

function pageBottom(doc: Doc): number {
  return doc.page.height - doc.page.margins.bottom;
}

function contentWidth(doc: Doc): number {
  return doc.page.width - doc.page.margins.left - doc.page.margins.right;
}

/** `YYYY-MM-DD HH:MM:SS UTC`; a value that is not a time is shown as given rather than hidden. */
export function formatEvidenceTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const time = formatEvidenceTime;

/** Exact byte counts, grouped for reading: evidence wants "1,048,576", not "1 MB". */
function groupDigits(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function clip(value: string): string {
  if (value.length <= MAX_CELL_CHARS) return value;
  return `${value.slice(0, MAX_CELL_CHARS)}… [${value.length - MAX_CELL_CHARS} more characters]`;
}

/** The characters beyond Latin-1 that pdfkit's built-in fonts encode (WinAnsiEncoding). */
const WIN_ANSI_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/**
 * What the built-in Helvetica can draw: pdfkit writes other characters as garbage bytes, so they
 * become "?" (the JSON record keeps the original); control characters become spaces.
 */
function text(value: string): string {
  let out = '';
  for (const char of value.normalize('NFC')) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += ' ';
    else if (code <= 0xff || WIN_ANSI_EXTRAS.has(char)) out += char;
    else out += '?';
  }
  return out;
}
