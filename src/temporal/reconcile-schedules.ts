import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction } from '@temporalio/client';
import type { Platform } from '../domain/platforms';
import { nextIntervalTime, reconcileScheduleId, type ReconcileInput } from '../domain/reconciliation';
import type { reconcileIntegration } from '../../workflows';

/** What a schedule is: its interval and the task queue its runs go to. */
export interface ReconcileSchedulePolicy {
  taskQueue: string;
  intervalMs: number;
}

/**
 * The Temporal Schedules of missed-webhook reconciliation (decisions §15): one per enabled
 * integration, `reconcile/{orgId}/{platform}`, starting `reconcileIntegration` every
 * RECONCILE_INTERVAL; a run still going when the next is due makes that one skipped (overlap SKIP).
 * The one place that knows the schedules' options; created, updated, paused and deleted with the
 * setting, paused when the platform refuses the credentials.
 */
export class ReconcileSchedules {
  constructor(
    private readonly client: Client,
    private readonly policy: ReconcileSchedulePolicy,
  ) {}

  private action(orgId: string, platform: Platform): ScheduleOptionsAction {
    const input: ReconcileInput = { orgId, platform };
    return {
      type: 'startWorkflow',
      workflowType: 'reconcileIntegration' satisfies (typeof reconcileIntegration)['name'],
      workflowId: reconcileScheduleId(orgId, platform),
      taskQueue: this.policy.taskQueue,
      args: [input],
    };
  }

  private spec() {
    return { intervals: [{ every: this.policy.intervalMs }] };
  }

  /** Creates the schedule running, or brings an existing one to the current interval and running again (credentials were saved). */
  async upsert(orgId: string, platform: Platform): Promise<void> {
    const scheduleId = reconcileScheduleId(orgId, platform);
    const spec = this.spec();
    const action = this.action(orgId, platform);
    try {
      await this.client.schedule.create({
        scheduleId, spec, action,
        policies: { overlap: ScheduleOverlapPolicy.SKIP },
        state: { paused: false },
      });
      return;
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    }
    // Running again in the same update, not by an unpause sent after it: on a busy engine the two could
    // be applied in the other order, and the update's state (still paused) then won for good.
    await this.client.schedule.getHandle(scheduleId).update((previous) => ({
      ...previous, spec, action,
      policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP },
      state: { ...previous.state, paused: false, note: 'credentials saved' },
    }));
  }

  /**
   * Brings the schedules of `enabled` that were saved with another interval (RECONCILE_INTERVAL has
   * changed since) to the current one, each kept paused or running as it is; answers how many moved.
   * One listing of the namespace's schedules, not a describe each: a worker runs this as it starts.
   * A schedule the listing does not show yet (just created, so already current) is left alone. The
   * engine's update writes the whole schedule: a refusal's pause landing between its read and its
   * write is undone, and the next run, refused again, pauses it again (no second email: the pause
   * stamped in the database stays).
   */
  async alignIntervals(enabled: ReadonlyArray<{ orgId: string; platform: Platform }>): Promise<number> {
    // Most services reconcile nothing: their workers start without asking the engine.
    if (enabled.length === 0) return 0;
    const wanted = new Map(enabled.map((e) => [reconcileScheduleId(e.orgId, e.platform), e]));
    // The engine keeps intervals in whole seconds.
    const every = Math.round(this.policy.intervalMs / 1000) * 1000;
    const current = (intervals: ReadonlyArray<{ every: number; offset?: number }>) => intervals.length === 1 && intervals[0].every === every && !intervals[0].offset;
    const stale: Array<{ orgId: string; platform: Platform }> = [];
    for await (const summary of this.client.schedule.list()) {
      const integration = wanted.get(summary.scheduleId);
      if (integration && !current(summary.spec?.intervals ?? [])) stale.push(integration);
    }
    let moved = 0;
    for (const { orgId, platform } of stale) {
      try {
        await this.client.schedule.getHandle(reconcileScheduleId(orgId, platform)).update((previous) => ({
          ...previous, spec: this.spec(), action: this.action(orgId, platform),
        }));
        moved += 1;
      } catch (error) {
        // Disabled since it was listed.
        if (!(error instanceof ScheduleNotFoundError)) throw error;
      }
    }
    return moved;
  }

  async pause(orgId: string, platform: Platform, note: string): Promise<void> {
    try {
      await this.client.schedule.getHandle(reconcileScheduleId(orgId, platform)).pause(note);
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }

  /** Deletes the schedule; one already gone is fine. */
  async remove(orgId: string, platform: Platform): Promise<void> {
    try {
      await this.client.schedule.getHandle(reconcileScheduleId(orgId, platform)).delete();
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  }

  /** Starts a run now (skipped, like a scheduled one, while a run is going). */
  async trigger(orgId: string, platform: Platform): Promise<void> {
    await this.client.schedule.getHandle(reconcileScheduleId(orgId, platform)).trigger(ScheduleOverlapPolicy.SKIP);
  }

  /**
   * When a running schedule starts its next run, from its interval: not asked of the engine, whose
   * DescribeSchedule once took 30 s beside a busy run and failed a settings read with it.
   */
  nextRunAt(now: Date): string {
    return nextIntervalTime(this.policy.intervalMs, now).toISOString();
  }
}
