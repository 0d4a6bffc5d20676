import { ApplicationFailure, Context } from '@temporalio/activity';
import { MAX_IN_FLIGHT_PER_ENDPOINT, type AttemptOutcome } from '../src/domain/outbound-events';
import { withEndpointSlot } from '../src/events/endpoint-lease-store';
import { EndpointSlots } from '../src/events/endpoint-slots';
import { attemptDelivery, staffEmails, type DisabledNotice } from '../src/events/outbound-events';
import { endpointDisabledMail } from '../src/mail/templates';
import type { KeyRing } from '../src/security/key-ring';
import type { ActivityDeps } from './deps';
import { recordOutboundAttempt } from './metrics';
import { createSendOnce, PERMANENT_SMTP_FAILURE } from './send-once';

/** Attempts waiting for one endpoint's slot in this process, at most; more answer `busy` at once. */
const MAX_WAITING_PER_ENDPOINT = 50;
const MAX_WAIT_FOR_SLOT_MS = 30_000;
const HEARTBEAT_EVERY_MS = 2_000;

/** The outbound task queue's activity (decisions §13): one attempt of one event to one endpoint. */
export function outboundEventActivities({ orm, mailer, config, keyRing }: ActivityDeps & { keyRing: KeyRing }) {
  const slots = new EndpointSlots(MAX_IN_FLIGHT_PER_ENDPOINT, MAX_WAITING_PER_ENDPOINT);
  const sendOnce = createSendOnce({ orm, mailer, config });
  const settings = { allowPrivate: config.outbound.allowPrivate, disableAfterMs: config.outbound.disableAfterMs };

  /**
   * The owners' and admins' email that deliveries disabled the endpoint: once per failing streak,
   * whichever attempt sends it (exclusive: runs of several events may find the endpoint disabled at
   * once). A relay that refuses it for good is logged: the delivery goes on as it would.
   */
  async function tellStaff(endpointId: string, disabled: DisabledNotice): Promise<void> {
    const staff = await staffEmails(orm.em.fork(), disabled.orgId);
    if (staff.emails.length === 0) return;
    try {
      await sendOnce(`endpoint-disabled:${endpointId}:${disabled.since}`, 'alert', disabled.orgId, staff.emails, async () =>
        endpointDisabledMail({ orgName: staff.orgName, url: disabled.url, reason: disabled.reason, settingsUrl: `${config.baseUrl}/settings/webhooks` }),
      { exclusive: true });
    } catch (error) {
      if (!(error instanceof ApplicationFailure && error.type === PERMANENT_SMTP_FAILURE)) throw error;
      Context.current().log.warn('the relay refused the email of a disabled endpoint', { endpointId, message: error.message });
    }
  }

  return {
    /**
     * Sends the event to the endpoint in one of its slots, logs the attempt, moves the delivery on,
     * and when deliveries have disabled the endpoint, emails its organisation's owners and admins
     * once (keyed by the endpoint and the start of its failing streak).
     */
    async sendOutboundEvent(target: { eventId: string; endpointId: string; last: boolean }): Promise<AttemptOutcome> {
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        // This process's line first (first come, first served, few activity slots held), then one
        // of the endpoint's slots shared by every worker process.
        const sent = await slots.run(target.endpointId, MAX_WAIT_FOR_SLOT_MS, () => withEndpointSlot(
          orm.em.fork(), target.endpointId, MAX_IN_FLIGHT_PER_ENDPOINT, () => attemptDelivery(orm.em.fork(), keyRing, settings, target),
        ));
        if (sent.busy || sent.value.busy) return { kind: 'busy' };
        const { outcome, result, disabled } = sent.value.value;
        if (result) recordOutboundAttempt(outcome.kind, result.durationMs / 1000);
        if (disabled) await tellStaff(target.endpointId, disabled);
        return outcome;
      } finally {
        clearInterval(beat);
      }
    },
  };
}
