/** Reading a PDF back in tests: pdf-parse (pdf.js) extracts the text a reader would see. */

export interface ParsedPdf {
  numpages: number;
  text: string;
  info: Record<string, unknown>;
}
export interface TextItem {
  str: string;
  width: number;
  /** [a, b, c, d, x, y] in PDF user space (points). */
  transform: number[];
}
export interface PdfPage {
  getTextContent(): Promise<{ items: TextItem[] }>;
}

// The library file itself: pdf-parse's index.js runs a self-test (reading a sample PDF that is not
// shipped) when it believes it is the main module, which is what it concludes under jest.
export const pdfParse = require('pdf-parse/lib/pdf-parse.js') as (
  data: Buffer,
  options?: { pagerender?: (page: PdfPage) => Promise<string> },
) => Promise<ParsedPdf>;

/** Extracted text breaks lines where the PDF wraps them: runs of whitespace become one space. */
export function squash(value: string): string {
  return value.replace(/\s+/g, ' ');
}

/** The text of every page, whitespace squashed. */
export async function pdfText(pdf: Buffer): Promise<string> {
  return squash((await pdfParse(pdf)).text);
}
