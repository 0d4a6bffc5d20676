/**
 * What a stamped PDF carries (decisions §16): a footer on every page naming the buyer and the order,
 * and metadata naming the purchase. Pure: the PDF work is in src/downloads/pdf-stamp.ts.
 */

export interface PdfStamp {
  /** The line drawn at the foot of every page. */
  footer: string;
  /** The document's Subject. */
  subject: string;
  /** The document's Keywords. */
  keywords: string[];
}

/** Whom a stamped copy is for. */
export interface StampedFor {
  purchaseId: string;
  email: string;
  /** The platform's order id; a sale entered without one shows the purchase id. */
  orderId: string | null;
}

export function pdfStampOf(buyer: StampedFor): PdfStamp {
  const order = buyer.orderId ?? buyer.purchaseId;
  return {
    footer: `Licensed to ${buyer.email} · Order ${order}`,
    subject: `Licensed to ${buyer.email} · Order ${order} · Purchase ${buyer.purchaseId}`,
    keywords: [`purchase:${buyer.purchaseId}`, `order:${order}`],
  };
}

/** Files stamped for a product that stamps: PDFs by type or by name. Other files are served unchanged. */
export function isPdfFile(file: { name: string; contentType: string }): boolean {
  return file.contentType.toLowerCase() === 'application/pdf' || /\.pdf$/i.test(file.name);
}

/** Larger PDFs are refused at upload for a product that stamps: the stamping reads the whole file into memory. */
export const MAX_STAMPED_PDF_BYTES = 256 * 1024 * 1024;
