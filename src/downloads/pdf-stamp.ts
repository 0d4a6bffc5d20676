import { degrees, PDFDocument, rgb, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import type { PdfStamp } from '../domain/pdf-stamp';

/**
 * Stamping with pdf-lib (decisions §16). CPU-bound and whole-file: it runs in a worker thread
 * (pdf-stamp-worker.ts), never on an event loop that answers requests.
 */

/** Why a PDF cannot be stamped, in words a seller can act on (the upload's 422). */
export class UnstampablePdfError extends Error {
  override name = 'UnstampablePdfError';
}

const FOOTER_SIZE = 8;
const FOOTER_MARGIN = 10;
const FOOTER_GREY = rgb(0.35, 0.35, 0.35);

async function load(pdf: Uint8Array): Promise<PDFDocument> {
  let doc: PDFDocument;
  try {
    // updateMetadata: false keeps the seller's producer and dates; only what names the buyer changes.
    // Encryption is looked at after loading: pdf-lib's own error for it is not an instance of its class.
    doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  } catch (error) {
    throw new UnstampablePdfError(`the PDF cannot be read: ${(error as Error).message}`);
  }
  if (doc.isEncrypted) throw new UnstampablePdfError('the PDF is encrypted (password-protected); upload it without encryption');
  let pages: number;
  try {
    pages = doc.getPageCount();
  } catch (error) {
    throw new UnstampablePdfError(`the PDF's pages cannot be read: ${(error as Error).message}`);
  }
  if (pages === 0) throw new UnstampablePdfError('the PDF has no pages');
  return doc;
}

/** The upload's check stamps as a buyer's copy is stamped, and throws the copy away. */
const CHECK_STAMP: PdfStamp = { footer: 'Licensed to buyer@example.com · Order 1', subject: 'check', keywords: [] };

/**
 * Refuses, with the reason, a PDF that stamping would fail on: by stamping it, since pdf-lib reads
 * some PDFs that it cannot draw on (a catalog without a page tree, a page without a MediaBox).
 */
export async function assertStampable(pdf: Uint8Array): Promise<void> {
  await stampPdf(pdf, CHECK_STAMP);
}

/** The footer in the font's own characters: one it cannot draw (a non-Latin address, say) becomes '?'. */
function drawable(font: PDFFont, text: string): string {
  const known = new Set(font.getCharacterSet());
  return [...text].map((char) => (known.has(char.codePointAt(0)!) ? char : '?')).join('');
}

/**
 * Centred along the bottom edge of the page as it is shown: a page with /Rotate gets the text turned
 * with it, so the footer reads upright at the foot of what the reader sees.
 */
function drawFooter(page: PDFPage, font: PDFFont, text: string): void {
  const { x, y, width, height } = page.getCropBox();
  const length = font.widthOfTextAtSize(text, FOOTER_SIZE);
  const rotation = ((page.getRotation().angle % 360) + 360) % 360;
  const origin: Record<number, { x: number; y: number }> = {
    0: { x: x + (width - length) / 2, y: y + FOOTER_MARGIN },
    90: { x: x + width - FOOTER_MARGIN, y: y + (height - length) / 2 },
    180: { x: x + (width + length) / 2, y: y + height - FOOTER_MARGIN },
    270: { x: x + FOOTER_MARGIN, y: y + (height + length) / 2 },
  };
  // /Rotate is a multiple of 90 in any valid PDF; anything else is drawn as if unrotated.
  const turn = rotation in origin ? rotation : 0;
  page.drawText(text, { ...origin[turn], size: FOOTER_SIZE, font, color: FOOTER_GREY, rotate: degrees(turn) });
}

/**
 * The PDF with the stamp's footer on every page and its Subject and Keywords in the metadata. Any
 * failure is the PDF's (pdf-lib throws on structures it cannot handle): UnstampablePdfError.
 */
export async function stampPdf(pdf: Uint8Array, stamp: PdfStamp): Promise<Uint8Array> {
  const doc = await load(pdf);
  try {
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const footer = drawable(font, stamp.footer);
    for (const page of doc.getPages()) drawFooter(page, font, footer);
    // Metadata strings are Unicode: the address goes in as it is.
    doc.setSubject(stamp.subject);
    doc.setKeywords(stamp.keywords);
    return await doc.save();
  } catch (error) {
    throw new UnstampablePdfError(`the PDF cannot be stamped: ${(error as Error).message}`);
  }
}
