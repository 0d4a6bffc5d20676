/**
 * PDF stamping (decisions §16) on a 300-page, ~20 MB PDF, in one run:
 *
 * - the library's stamping time per page (pdf-lib, in this process) against Debian's
 *   `qpdf --overlay` putting a one-page footer PDF on every page of the same file (qpdf draws one
 *   footer for all pages, pdf-lib a footer per page: the work a stamp needs either way);
 * - the service's first download of the stamped PDF: time to first byte (the copy is made before
 *   the first byte goes) and the server process's peak RSS meanwhile (the stamping thread included);
 * - later downloads of the stamped copy against the unstamped file of another product (same bytes,
 *   same route) in alternating rounds: MB/s, target ≥ 0.8×.
 *
 *   npm run build && npm run bench:build && node .bench-build/bench/downloads/stamp-bench.js
 *
 * BENCH_PAGES (default 300) and BENCH_PDF_MIB (default 20) shape the PDF (each page shows an image
 * of random grey pixels, so the bytes are the pages' own); BENCH_ROUNDS (default 6) counts the later
 * downloads of each. Files live under the harness's temporary data folder and go with it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState, rgb, StandardFonts,
} from 'pdf-lib';
import { pdfStampOf } from '../../src/domain/pdf-stamp';
import { stampPdf } from '../../src/downloads/pdf-stamp';
import { Product } from '../../src/db/entities';
import { addVersionFile, seedPurchase } from '../../test/helpers/download-links';
import { seedOrganisation, seedProduct } from '../../test/helpers/seed';
import { median } from '../lib/load';
import { runBenchmark } from '../lib/run';
import { transfer, type Transfer } from '../lib/transfer';
import { startBenchWorld } from '../lib/world';

const PAGES = Number(process.env.BENCH_PAGES ?? 300);
const SIZE = Number(process.env.BENCH_PDF_MIB ?? 20) * 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const TARGET_RATIO = 0.8;
const A4: [number, number] = [595, 842];

/** PAGES pages, each drawing an uncompressed grey image of its own: about SIZE bytes in all. */
async function bookPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const side = Math.floor(Math.sqrt(SIZE / PAGES));
  for (let n = 1; n <= PAGES; n += 1) {
    const page = doc.addPage(A4);
    const image = doc.context.register(doc.context.stream(randomBytes(side * side), {
      Type: 'XObject', Subtype: 'Image', Width: side, Height: side, ColorSpace: 'DeviceGray', BitsPerComponent: 8,
    }));
    const name = page.node.newXObject('Im', image);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(400, 0, 0, 400, 97, 300), drawObject(name), popGraphicsState());
    page.drawText(`Page ${n}`, { x: 60, y: 780, font, size: 14 });
  }
  return doc.save();
}

/** The footer alone on one A4 page: what qpdf lays over every page. */
async function footerPdf(text: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage(A4).drawText(text, { x: (A4[0] - font.widthOfTextAtSize(text, 8)) / 2, y: 10, size: 8, font, color: rgb(0.35, 0.35, 0.35) });
  return doc.save();
}

const msSince = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;
const round1 = (n: number) => Math.round(n * 10) / 10;
const mb = (bytes: number) => round1(bytes / 1e6);

/** pdf-lib and qpdf on the same file, three times each; median ms. */
async function libraryTimes(pdf: Uint8Array, dir: string) {
  const stamp = pdfStampOf({ purchaseId: '00000000-0000-4000-8000-000000000001', email: 'reader@example.com', orderId: 'ORD-1' });
  const pdfLib: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const started = process.hrtime.bigint();
    await stampPdf(pdf, stamp);
    pdfLib.push(msSince(started));
  }
  const input = path.join(dir, 'book.pdf');
  const footer = path.join(dir, 'footer.pdf');
  await writeFile(input, pdf);
  await writeFile(footer, await footerPdf(stamp.footer));
  const qpdf: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const started = process.hrtime.bigint();
    const run = spawnSync('qpdf', [input, '--overlay', footer, '--repeat=1', '--', path.join(dir, 'out.pdf')]);
    if (run.error || run.status !== 0) return { pdfLibMs: median(pdfLib), qpdfMs: null, qpdfError: String(run.error ?? run.stderr) };
    qpdf.push(msSince(started));
  }
  return { pdfLibMs: median(pdfLib), qpdfMs: median(qpdf), qpdfError: null };
}

interface Measured extends Transfer {
  mbPerSecond: number;
  rssStartMb: number;
  rssMaxMb: number;
}

/** One download, with this (server) process's RSS sampled every 10 ms while it runs. */
async function measured(url: string): Promise<Measured> {
  (globalThis as { gc?: () => void }).gc?.();
  const start = process.memoryUsage.rss();
  let max = start;
  const sampler = setInterval(() => { max = Math.max(max, process.memoryUsage.rss()); }, 10);
  try {
    const result = await transfer(url);
    if (result.status !== 200) throw new Error(`${url} answered ${result.status}`);
    return { ...result, mbPerSecond: Math.round(result.bytes / 1e6 / (result.ms / 1000)), rssStartMb: mb(start), rssMaxMb: mb(max) };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'delivery-bench-stamp-'));
  const world = await startBenchWorld({ worker: false });
  try {
    const pdf = await bookPdf();
    process.stdout.write(`PDF: ${PAGES} pages, ${mb(pdf.length)} MB\n`);
    const lib = await libraryTimes(pdf, scratch);
    const perPage = (ms: number) => Math.round((ms / PAGES) * 1000) / 1000;
    process.stdout.write(`stamping: pdf-lib ${Math.round(lib.pdfLibMs)} ms (${perPage(lib.pdfLibMs)} ms/page)`);
    process.stdout.write(lib.qpdfMs === null
      ? `; qpdf --overlay could not run (${lib.qpdfError}): apt-get install qpdf\n`
      : `, qpdf --overlay ${Math.round(lib.qpdfMs)} ms (${perPage(lib.qpdfMs)} ms/page): pdf-lib takes ${round1(lib.pdfLibMs / lib.qpdfMs)}× qpdf's time\n`);

    const { h } = world;
    const org = await seedOrganisation(h);
    const stamped = await seedProduct(h, org.orgId, { name: 'Stamped book' });
    const plain = await seedProduct(h, org.orgId, { name: 'Plain book' });
    await h.orm.em.fork().nativeUpdate(Product, { id: stamped.productId }, { stampPdfs: true });
    const stampedFile = await addVersionFile(h, stamped.versionId, 'book.pdf', Buffer.from(pdf));
    const plainFile = await addVersionFile(h, plain.versionId, 'book.pdf', Buffer.from(pdf));
    const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const urls = {
      stamped: `${base}/d/${(await seedPurchase(h, org.orgId, stamped)).token}/files/${stampedFile}`,
      plain: `${base}/d/${(await seedPurchase(h, org.orgId, plain)).token}/files/${plainFile}`,
    };

    const first = await measured(urls.stamped);
    process.stdout.write(`first download (stamped on the way): time to first byte ${Math.round(first.ttfbMs)} ms, whole ${Math.round(first.ms)} ms, `
      + `server RSS ${first.rssStartMb} → max ${first.rssMaxMb} MB\n`);

    await measured(urls.plain); // warm-up of the plain file's path and page cache
    const runs: { stamped: Measured[]; plain: Measured[] } = { stamped: [], plain: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? (['plain', 'stamped'] as const) : (['stamped', 'plain'] as const);
      for (const which of order) {
        const run = await measured(urls[which]);
        runs[which].push(run);
        process.stdout.write(`${which.padEnd(8)} round ${round + 1}: ${String(run.mbPerSecond).padStart(5)} MB/s, first byte ${round1(run.ttfbMs)} ms\n`);
      }
    }
    const stampedMbps = median(runs.stamped.map((r) => r.mbPerSecond));
    const plainMbps = median(runs.plain.map((r) => r.mbPerSecond));
    const ratio = Number((stampedMbps / plainMbps).toFixed(2));
    process.stdout.write(`later downloads, median: stamped copy ${stampedMbps} MB/s, unstamped file ${plainMbps} MB/s, ratio ${ratio}× `
      + `(target ≥ ${TARGET_RATIO}×: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})\n`);
    process.stdout.write(`RESULT ${JSON.stringify({
      pages: PAGES, pdfMb: mb(pdf.length), pdfLibMsPerPage: perPage(lib.pdfLibMs), qpdfMsPerPage: lib.qpdfMs === null ? null : perPage(lib.qpdfMs),
      firstTtfbMs: Math.round(first.ttfbMs), firstRssMaxMb: first.rssMaxMb, firstRssStartMb: first.rssStartMb,
      stampedMbps, plainMbps, ratio, target: TARGET_RATIO, met: ratio >= TARGET_RATIO,
    })}\n`);
  } finally {
    await world.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

runBenchmark(main);
