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

  /** Creates the schedule running, or brings an existing one to the current interval and running again (credentials were saved). */
  async upsert(orgId: string, platform: Platform): Promise<void> {
    const scheduleId = reconcileScheduleId(orgId, platform);
    const spec = { intervals: [{ every: this.policy.intervalMs }] };
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
