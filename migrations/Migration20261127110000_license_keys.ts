import { Migration } from '@mikro-orm/migrations';

/** The event recorder of Migration20261127070000_outbound_events, with (or, going down, without) its data. */
function recorder(withData: boolean): string {
  return `create function "record_outbound_event"(org uuid, event_type text, subject uuid, subject_row jsonb${withData ? ', event_data jsonb default null' : ''})
    returns void language plpgsql as $$
    declare
      new_id text := 'evt_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000000)::bigint), 14, '0')
        || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12);
    begin
      insert into "outbound_event" ("id", "organisation_id", "type", "subject_id", "subject_row", "data", "created_at")
      values (new_id, org, event_type, subject, subject_row, ${withData ? 'event_data' : 'null'}, now());
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
    end $$;`;
}

/**
 * License keys (decisions §14): a product's key policy and its pool's warning marks, the keys (one
 * per purchase, each text once across the service) and their activations. `record_outbound_event`
 * takes the event's data when its recorder knows it at the moment of the change: a license event
 * reports the activations as they were then, not when it is sent.
 */
export class Migration20261127110000_license_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "product" add column "license_source" text null, add column "license_activation_limit" int null,
      add column "license_low_warned" boolean not null default false, add column "license_dry_alerted" boolean not null default false;`);
    this.addSql(`alter table "purchase" add column "license_wanted" boolean not null default false;`);

    this.addSql(`create table "license_key" ("id" uuid not null, "organisation_id" uuid not null, "product_id" uuid not null, "key" text not null,
      "purchase_id" uuid null, "issued_at" timestamptz null, "created_at" timestamptz not null, constraint "license_key_pkey" primary key ("id"));`);
    this.addSql(`alter table "license_key" add constraint "license_key_key_unique" unique ("key");`);
    this.addSql(`alter table "license_key" add constraint "license_key_purchase_id_unique" unique ("purchase_id");`);
    this.addSql(`create index "license_key_product_id_purchase_id_created_at_index" on "license_key" ("product_id", "purchase_id", "created_at");`);
    this.addSql(`alter table "license_key" add constraint "license_key_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "license_key" add constraint "license_key_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "license_key" add constraint "license_key_purchase_id_foreign" foreign key ("purchase_id") references "purchase" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "license_activation" ("id" uuid not null, "license_key_id" uuid not null, "instance_name" text not null,
      "activated_at" timestamptz not null, "deactivated_at" timestamptz null, constraint "license_activation_pkey" primary key ("id"));`);
    this.addSql(`create index "license_activation_license_key_id_index" on "license_activation" ("license_key_id");`);
    this.addSql(`alter table "license_activation" add constraint "license_activation_license_key_id_foreign" foreign key ("license_key_id") references "license_key" ("id") on update cascade on delete cascade;`);

    this.addSql(`drop function "record_outbound_event"(uuid, text, uuid, jsonb);`);
    this.addSql(recorder(true));
  }

  override async down(): Promise<void> {
    this.addSql(`drop function "record_outbound_event"(uuid, text, uuid, jsonb, jsonb);`);
    this.addSql(recorder(false));
    this.addSql('drop table if exists "license_activation" cascade;');
    this.addSql('drop table if exists "license_key" cascade;');
    this.addSql('alter table "purchase" drop column "license_wanted";');
    this.addSql(`alter table "product" drop column "license_source", drop column "license_activation_limit",
      drop column "license_low_warned", drop column "license_dry_alerted";`);
  }
}
