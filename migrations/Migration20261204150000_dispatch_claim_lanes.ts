import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox claim's index (src/outbox/outbox-store, CLAIM_INDEX): each organisation's live rows
 * under a key an equality finds (rows of no organisation under the nil uuid), bulk work (an
 * integrator's events, version notices, reminders) in a lane after its other rows, then by due time.
 * It replaces the index on (organisation_id, due_at), which the claim's `is not distinct from`
 * could not use: every claim read and sorted the whole outbox.
 */
export class Migration20261204150000_dispatch_claim_lanes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "workflow_dispatch_claim_index" on "workflow_dispatch"
      ((coalesce(organisation_id, '00000000-0000-0000-0000-000000000000'::uuid)),
       (case when kind in ('deliver-event', 'notify-buyers', 'buyer-reminder', 'transfer-completed') then 1 else 0 end), "due_at")
      where "dead_at" is null;`);
    this.addSql(`drop index if exists "workflow_dispatch_live_index";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index "workflow_dispatch_live_index" on "workflow_dispatch" ("organisation_id", "due_at") where "dead_at" is null;`);
    this.addSql(`drop index if exists "workflow_dispatch_claim_index";`);
  }
}
