/*
 * Reads a PDF on stdin and writes {numpages, info, text, pages, items} as JSON on stdout, with Mozilla's
 * pdf.js (pdfjs-dist). It runs in a process of its own because pdf.js is an ES module, which jest's
 * CommonJS module system cannot load.
 */
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
const standardFontDataUrl = `${path.join(path.dirname(require.resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`;

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const doc = await pdfjs.getDocument({ data: new Uint8Array(Buffer.concat(chunks)), standardFontDataUrl, isEvalSupported: false }).promise;
const items = [];
let text = '';
const pages = [];
for (let number = 1; number <= doc.numPages; number += 1) {
  const content = await (await doc.getPage(number)).getTextContent();
  let lastY;
  const pageStart = text.length;
  for (const item of content.items) {
    if (typeof item.str !== 'string') continue;
    items.push({ str: item.str, width: item.width, transform: item.transform });
    // A new line where the baseline moves, as a reader sees the text.
    text += lastY === undefined || lastY === item.transform[5] ? item.str : `\n${item.str}`;
    lastY = item.transform[5];
  }
  pages.push(text.slice(pageStart));
  text += '\n\n';
}
const { info } = await doc.getMetadata();
process.stdout.write(JSON.stringify({ numpages: doc.numPages, info, text, pages, items }));
