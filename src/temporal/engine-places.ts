/**
 * An API process's ear for the database's word that a webhook run's items got their outcomes, so its
 * place in the engine's budget (DISPATCH_ENGINE_RUNS) is free: a trigger on the item notifies it at
 * the commit. With the budget full, a claim finds nothing to start and its loop sleeps until a nudge
 * or its next poll (DISPATCH_POLL_INTERVAL): without this word a freed place waited up to that poll,
 * which held the rate of starts to about a budget a second. The word comes from PostgreSQL
 * (LISTEN/NOTIFY), so it reaches every API process whichever worker process ran the run: `npm start`,
 * the roles apart and the cluster alike.
 *
 * The listener holds one connection of its own, outside the pool. When it is lost (PostgreSQL
 * restarted, the session killed) it connects again with a growing pause, and wakes the dispatcher
 * once it is back, for the places freed while it was deaf; meanwhile the poll still finds them.
 */
import { Client } from 'pg';
import { FREED_PLACE_CHANNEL } from '../deliveries/engine-runs-store';
import { doubledPauseMs } from '../domain/backoff';

export interface FreedPlacesOptions {
  databaseUrl: string;
  /** Called on each freed place, and once after every reconnection. */
  onFreed: () => void;
  log: { warn(details: object, message: string): void };
}

/** First and longest pause before connecting again. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/** The `application_name` of the listener's session, to tell it apart in `pg_stat_activity`. */
export const FREED_PLACES_APPLICATION = 'delivery-service freed-places listener';

export class FreedPlacesListener {
  private client: Client | undefined;
  private closed = false;
  private pauseMs = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: FreedPlacesOptions) {}

  /** Starts listening; a first connection that fails is retried like a lost one. */
  start(): void {
    void this.connect(false);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(reconnecting: boolean): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl, application_name: FREED_PLACES_APPLICATION });
    // Both fire when the session ends; an error event nobody hears would end the process.
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      void client.end().catch(() => undefined);
      if (this.client === client) this.client = undefined;
      this.scheduleReconnect(error);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', () => this.options.onFreed());
    try {
      await client.connect();
      await client.query(`listen ${FREED_PLACE_CHANNEL}`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.pauseMs = 0;
    if (reconnecting) this.options.onFreed();
  }

  private scheduleReconnect(error: Error | undefined): void {
    if (this.closed) return;
    if (this.pauseMs === 0) this.options.log.warn({ err: error }, 'freed-places listener has no PostgreSQL session; connecting again (the dispatcher polls meanwhile)');
    this.pauseMs = doubledPauseMs(this.pauseMs, RECONNECT_FIRST_MS, RECONNECT_MAX_MS);
    this.retry = setTimeout(() => void this.connect(true), this.pauseMs);
    this.retry.unref();
  }
}
