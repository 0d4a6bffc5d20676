import { Migration } from '@mikro-orm/migrations';

/** An outbox row keeps the trace context of the request that recorded it (OpenTelemetry, when on). */
export class Migration20261126110000_dispatch_trace_parent extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "workflow_dispatch" add column "trace_parent" text null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "workflow_dispatch" drop column "trace_parent";`);
  }
}
