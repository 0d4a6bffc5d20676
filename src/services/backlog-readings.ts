/**
 * What the front door last read of each organisation's waiting outbox rows, against its cap
 * (DISPATCH_ORGANISATION_BACKLOG). Counting them walks up to the cap's number of index entries, so
 * counted on every delivery it made each acknowledgement dearer the longer the organisation's backlog
 * grew. A reading is trusted for READING_MAX_AGE_MS, adding the rows this process recorded since:
 * exact within one process; several API processes together may pass the cap by what the others
 * accepted in that time.
 */

/** How long a count of an organisation's waiting rows is trusted before it is read again. */
const READING_MAX_AGE_MS = 1_000;

interface Reading {
  /** Waiting rows when read (at most the cap: the count stops there). */
  waiting: number;
  /** Rows this process recorded for the organisation since. */
  added: number;
  /** When it was read, on `now` (milliseconds). */
  at: number;
}

export class BacklogReadings {
  private readonly readings = new Map<string, Reading>();

  /**
   * `now`: the process's monotonic clock by default, not the business clock, which may stand still
   * (tests) or jump.
   */
  constructor(
    readonly cap: number,
    private readonly maxAgeMs = READING_MAX_AGE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Whether the organisation's share is full (true) or not (false) without reading it, or undefined
   * when it must be read: no fresh reading, or this process's additions may have filled it since.
   */
  known(orgId: string): boolean | undefined {
    const reading = this.readings.get(orgId);
    if (reading === undefined) return undefined;
    if (this.now() - reading.at > this.maxAgeMs) {
      this.readings.delete(orgId);
      return undefined;
    }
    if (reading.waiting >= this.cap) return true;
    return reading.waiting + reading.added < this.cap ? false : undefined;
  }

  /** Every organisation whose answer is known now (a shared route's candidates are not known before the read). */
  allKnown(): string[] {
    return [...this.readings.keys()].filter((orgId) => this.known(orgId) !== undefined);
  }

  /** A count just read; answers whether the share is full. */
  read(orgId: string, waiting: number): boolean {
    this.readings.set(orgId, { waiting, added: 0, at: this.now() });
    return waiting >= this.cap;
  }

  /** Rows this process just recorded for the organisation. */
  added(orgId: string, rows: number): void {
    const reading = this.readings.get(orgId);
    if (reading !== undefined) reading.added += rows;
  }
}
