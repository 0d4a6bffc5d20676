/** Reading a PDF back in tests: Mozilla's pdf.js extracts the text a reader would see. */
import { execFile } from 'node:child_process';
import path from 'node:path';

export interface TextItem {
  str: string;
  width: number;
  /** [a, b, c, d, x, y] in PDF user space (points). */
  transform: number[];
}

export interface ParsedPdf {
  numpages: number;
  text: string;
  /** Each page's text, in page order. */
  pages: string[];
  info: Record<string, unknown>;
  /** Every run of text with its position, for layout checks. */
  items: TextItem[];
}

/** Parses in a child process (see pdf-text-child.mjs for why). */
export function parsePdf(pdf: Buffer): Promise<ParsedPdf> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [path.join(__dirname, 'pdf-text-child.mjs')], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`pdf.js could not read the PDF: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as ParsedPdf);
    });
    child.stdin!.end(pdf);
  });
}

/** Extracted text breaks lines where the PDF wraps them: runs of whitespace become one space. */
export function squash(value: string): string {
  return value.replace(/\s+/g, ' ');
}

/** The text of every page, whitespace squashed. */
export async function pdfText(pdf: Buffer): Promise<string> {
  return squash((await parsePdf(pdf)).text);
}
