/** A worker thread's entry (see renderEvidencePdf): draws the record it was given and posts the PDF back. */
import { parentPort, workerData } from 'node:worker_threads';
import type { EvidenceRecord } from '../domain/evidence';
import { drawEvidencePdf } from './evidence-pdf';

void drawEvidencePdf(workerData as EvidenceRecord).then((pdf) => parentPort!.postMessage(pdf));
