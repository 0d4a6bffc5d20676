/** The stamp's words and its drawing (pdf-lib, read back with pdf.js), without a server. */
import { degrees, PDFDocument } from 'pdf-lib';
import { isPdfFile, pdfStampOf } from '../../../src/domain/pdf-stamp';
import { assertStampable, stampPdf, UnstampablePdfError } from '../../../src/downloads/pdf-stamp';
import { parsePdf, squash } from '../../helpers/pdf-text';

async function blankPdf(rotations: number[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const angle of rotations) doc.addPage([400, 600]).setRotation(degrees(angle));
  return doc.save();
}

test('the footer names the buyer and the order, or the purchase for a sale without an order id', () => {
  expect(pdfStampOf({ purchaseId: 'p-1', email: 'ann@example.com', orderId: 'ORD-9' })).toEqual({
    footer: 'Licensed to ann@example.com · Order ORD-9',
    subject: 'Licensed to ann@example.com · Order ORD-9 · Purchase p-1',
    keywords: ['purchase:p-1', 'order:ORD-9'],
  });
  expect(pdfStampOf({ purchaseId: 'p-2', email: 'bo@example.com', orderId: null }).footer).toBe('Licensed to bo@example.com · Order p-2');
});

test('PDFs are known by type or by name', () => {
  expect(isPdfFile({ name: 'book.PDF', contentType: 'application/octet-stream' })).toBe(true);
  expect(isPdfFile({ name: 'book', contentType: 'application/pdf' })).toBe(true);
  expect(isPdfFile({ name: 'book.zip', contentType: 'application/zip' })).toBe(false);
});

test('each page gets the footer upright at the foot of the page as shown, whatever its rotation', async () => {
  const stamp = pdfStampOf({ purchaseId: 'p-3', email: 'ann@example.com', orderId: 'ORD-3' });
  const parsed = await parsePdf(Buffer.from(await stampPdf(await blankPdf([0, 90, 180, 270]), stamp)));
  expect(parsed.pages.map(squash)).toEqual(Array(4).fill('Licensed to ann@example.com · Order ORD-3'));
  // The text's direction in user space turns with the page, so that it reads left to right when shown.
  const footers = parsed.items.filter((item) => item.str.startsWith('Licensed'));
  expect(footers.map((item) => item.transform.slice(0, 2).map((v) => Math.sign(Math.round(v)) || 0))).toEqual([[1, 0], [0, 1], [-1, 0], [0, -1]]);
  // Its baseline runs along the edge that is shown at the bottom: y = 10, x = 390, y = 590, x = 10 on a 400 × 600 page.
  expect(footers.map((item) => [Math.round(item.transform[4]), Math.round(item.transform[5])])).toEqual([
    [expect.any(Number), 10], [390, expect.any(Number)], [expect.any(Number), 590], [10, expect.any(Number)],
  ]);
});

test('an address the standard font cannot draw is drawn with ? in its place; the metadata keeps it whole', async () => {
  const stamp = pdfStampOf({ purchaseId: 'p-4', email: 'jürgen@пример.рф', orderId: 'ORD-4' });
  const parsed = await parsePdf(Buffer.from(await stampPdf(await blankPdf([0]), stamp)));
  expect(squash(parsed.text)).toContain('Licensed to jürgen@??????.?? · Order ORD-4');
  expect(parsed.info.Subject).toContain('jürgen@пример.рф');
});

test('what cannot be stamped is refused with the reason', async () => {
  await expect(assertStampable(new TextEncoder().encode('hello'))).rejects.toThrow(UnstampablePdfError);
  await expect(assertStampable(new TextEncoder().encode('hello'))).rejects.toThrow(/the PDF cannot be read/);
  await expect(assertStampable(await blankPdf([0]))).resolves.toBeUndefined();
});
