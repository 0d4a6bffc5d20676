import { Readable } from 'node:stream';

/**
 * A JSON array written batch by batch: `[`, the rows joined by `,`, `]`. Only one batch is in
 * memory at a time, and the next batch is read only when the client has taken the previous one
 * (Readable.from pulls on demand). Fastify pipes a stream as it is, without the response
 * serializer, so the route's response schema only documents what the stream carries.
 */
export function jsonArrayStream<Row>(batches: AsyncIterable<Row[]>, toJson: (row: Row) => unknown): Readable {
  async function* chunks(): AsyncGenerator<string> {
    let separator = '';
    yield '[';
    for await (const batch of batches) {
      yield separator + batch.map((row) => JSON.stringify(toJson(row))).join(',');
      separator = ',';
    }
    yield ']';
  }
  return Readable.from(chunks(), { objectMode: false });
}
