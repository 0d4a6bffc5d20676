import { Migration } from '@mikro-orm/migrations';

/** The changes that are events (decisions §13): the trigger, the table, the condition and the type. */
const EVENT_TRIGGERS = [
  { name: 'purchase_created_event', on: 'insert on "purchase"', when: 'true', type: 'purchase.created' },
  { name: 'purchase_revoked_event', on: 'update of "revoked_at" on "purchase"', when: 'old.revoked_at is null and new.revoked_at is not null', type: 'purchase.revoked' },
  { name: 'purchase_restored_event', on: 'update of "revoked_at" on "purchase"', when: 'old.revoked_at is not null and new.revoked_at is null', type: 'purchase.restored' },
  { name: 'receipt_failed_event', on: 'update of "receipt_status" on "purchase"', when: `new.receipt_status = 'failed' and old.receipt_status <> 'failed'`, type: 'receipt.failed' },
  { name: 'download_completed_event', on: 'insert on "activity_log_entry"', when: `new.kind = 'file_download'`, type: 'download.completed' },
  { name: 'delivery_failed_event', on: 'insert on "webhook_delivery"', when: `new.status = 'Error'`, type: 'delivery.failed' },
  { name: 'delivery_ended_failed_event', on: 'update of "status" on "webhook_delivery"', when: `new.status = 'Error' and old.status <> 'Error'`, type: 'delivery.failed' },
] as const;

/**
 * Outbound events: integrators' endpoints, the events, each event's delivery to each endpoint and
 * the attempts log. Events are written by triggers, in the transaction (and the statement) of the
 * change they describe, whatever path makes it (a platform's webhook, the API, the dashboard, a
 * held sale's delivery, a refund, a dispute, staff): none is lost when a process dies, none
 * describes a change that rolled back, and the hot path of a sale sends nothing more. The same
 * statement fans the event out: a delivery row and an outbox row (`deliver-event`, whose workflow
 * id is src/domain/outbound-events' outboundDeliveryWorkflowId) per enabled endpoint subscribed.
 */
export class Migration20261127070000_outbound_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoint" ("id" uuid not null, "organisation_id" uuid not null, "url" text not null, "events" jsonb not null, "description" text not null, "enabled" boolean not null, "secret" text not null, "previous_secret" text null, "previous_secret_until" timestamptz null, "failing_since" timestamptz null, "disabled_reason" text null, "created_at" timestamptz not null, constraint "webhook_endpoint_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_endpoint_organisation_id_index" on "webhook_endpoint" ("organisation_id");`);
    this.addSql(`create table "outbound_event" ("id" text not null, "organisation_id" uuid not null, "type" text not null, "subject_id" uuid not null, "subject_row" jsonb null, "data" jsonb null, "created_at" timestamptz not null, "transaction_id" xid8 not null default pg_current_xact_id(), constraint "outbound_event_pkey" primary key ("id"));`);
    this.addSql(`create index "outbound_event_created_at_index" on "outbound_event" ("created_at");`);
    this.addSql(`create index "outbound_event_organisation_id_id_index" on "outbound_event" ("organisation_id", "id");`);
    this.addSql(`create index "outbound_event_organisation_id_transaction_id_id_index" on "outbound_event" ("organisation_id", "transaction_id", "id");`);
    this.addSql(`create table "outbound_delivery" ("event_id" text not null, "endpoint_id" uuid not null, "state" text not null, "attempts" int not null, "updated_at" timestamptz not null, constraint "outbound_delivery_pkey" primary key ("event_id", "endpoint_id"));`);
    this.addSql(`create index "outbound_delivery_endpoint_id_state_index" on "outbound_delivery" ("endpoint_id", "state");`);
    this.addSql(`create table "outbound_attempt" ("id" uuid not null, "endpoint_id" uuid not null, "event_id" text not null, "type" text not null, "attempt" int not null, "at" timestamptz not null, "status" int null, "error" text null, "duration_ms" int not null, "response_excerpt" text not null, constraint "outbound_attempt_pkey" primary key ("id"));`);
    this.addSql(`create index "outbound_attempt_endpoint_id_at_index" on "outbound_attempt" ("endpoint_id", "at");`);
    this.addSql(`alter table "webhook_endpoint" add constraint "webhook_endpoint_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "outbound_event" add constraint "outbound_event_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "outbound_delivery" add constraint "outbound_delivery_event_id_foreign" foreign key ("event_id") references "outbound_event" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "outbound_delivery" add constraint "outbound_delivery_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoint" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "outbound_attempt" add constraint "outbound_attempt_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoint" ("id") on update cascade on delete cascade;`);

    // Ids sort by time: 14 hex digits of microseconds, then 12 random ones.
    this.addSql(`create function "record_outbound_event"(org uuid, event_type text, subject uuid, subject_row jsonb) returns void language plpgsql as $$
      declare
        new_id text := 'evt_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000000)::bigint), 14, '0')
          || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
      begin
        insert into "outbound_event" ("id", "organisation_id", "type", "subject_id", "subject_row", "data", "created_at")
        values (new_id, org, event_type, subject, subject_row, null, now());
        with endpoints as (
          select "id" from "webhook_endpoint"
          where "organisation_id" = org and "enabled" and ("events" = '[]'::jsonb or "events" @> jsonb_build_array(event_type))),
        deliveries as (
          insert into "outbound_delivery" ("event_id", "endpoint_id", "state", "attempts", "updated_at")
          select new_id, e."id", 'pending', 0, now() from endpoints e)
        insert into "workflow_dispatch" ("id", "organisation_id", "kind", "workflow_id", "payload", "created_at", "due_at", "attempts", "trace_parent")
        select gen_random_uuid(), org, 'deliver-event', 'event/' || new_id || '/' || e."id",
          jsonb_build_object('eventId', new_id, 'endpointId', e."id"), now(), now(), 0, null
        from endpoints e;
      end $$;`);
    // Every table with events has its organisation and its id: the trigger names the event type. A
    // purchase changes after its events (revoked, then restored): its row as it was is kept with
    // each, so that each event's data shows the purchase at its moment. The others do not change.
    this.addSql(`create function "outbound_event_of_row"() returns trigger language plpgsql as $$
      begin
        perform "record_outbound_event"(new."organisation_id", tg_argv[0], new."id",
          case when tg_table_name = 'purchase' then to_jsonb(new) end);
        return null;
      end $$;`);
    for (const t of EVENT_TRIGGERS) {
      this.addSql(`create trigger "${t.name}" after ${t.on} for each row when (${t.when})
        execute function "outbound_event_of_row"('${t.type}');`);
    }
  }

  override async down(): Promise<void> {
    for (const t of EVENT_TRIGGERS) this.addSql(`drop trigger if exists "${t.name}" on ${t.on.replace(/^.* on /, '')};`);
    this.addSql(`drop function if exists "outbound_event_of_row"();`);
    this.addSql(`drop function if exists "record_outbound_event"(uuid, text, uuid, jsonb);`);
    this.addSql(`drop table if exists "outbound_attempt" cascade;`);
    this.addSql(`drop table if exists "outbound_delivery" cascade;`);
    this.addSql(`drop table if exists "outbound_event" cascade;`);
    this.addSql(`drop table if exists "webhook_endpoint" cascade;`);
  }
}
