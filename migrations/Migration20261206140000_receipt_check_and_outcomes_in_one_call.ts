import { Migration } from '@mikro-orm/migrations';

/**
 * Two steps of every sale's run, each a transaction of several statements, become one call each
 * (src/purchases/revocation-store and src/deliveries/delivery-store call them):
 *
 * - `withdraw_before_receipt`: the receipt check (decisions §9). It reads the purchase, takes its
 *   order's revocation locks, then withdraws it if a refund's notice names it. A function because
 *   the notice must be read after the locks are held: each statement of a volatile plpgsql function
 *   takes a fresh snapshot, so a refund that held a lock has committed its notice by then; one
 *   plain statement would read with the snapshot of its start.
 * - `report_item_outcomes`: writes the items' outcomes (once each), then locks each of their entries
 *   and reads its outcomes after the lock (the same reason), for the caller to decide its status.
 *
 * `order_revocation_lock` and `revocation_notice_reason` are the lock and the notice lookup that the
 * refund's application and the sale's recording use too, so each is written once.
 */
export class Migration20261206140000_receipt_check_and_outcomes_in_one_call extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function "order_revocation_lock"(lock_org uuid, lock_source text, lock_ref text) returns void language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(hashtextextended('revoke:' || lock_org::text || ':' || lock_source || ':' || lock_ref, 0));
      end $$;`);
    this.addSql(`create function "revocation_notice_reason"(notice_org uuid, notice_source text, order_id text, payment_id text, line_product uuid)
      returns text language plpgsql stable as $$
      begin
        return (select n."reason" from "revocation_notice" n
          where n."organisation_id" = notice_org and n."source" = notice_source
            and ((n."ref_kind" = 'order' and n."order_ref" = order_id) or (n."ref_kind" = 'payment' and n."order_ref" = payment_id))
            and (n."product_id" is null or n."product_id" = line_product)
          order by n."created_at" limit 1);
      end $$;`);
    this.addSql(`create function "withdraw_before_receipt"(checked_purchase uuid, checked_at timestamptz) returns boolean language plpgsql as $$
      declare
        bought record;
        ref text;
      begin
        select p."organisation_id", p."source", p."external_order_id", p."payment_reference", p."product_id", p."revoked_at" is not null as revoked
          into bought from "purchase" p where p."id" = checked_purchase;
        if not found then return false; end if;
        if bought.revoked then return true; end if;
        if bought.external_order_id is null and bought.payment_reference is null then return false; end if;
        for ref in select r from unnest(array[bought.external_order_id, bought.payment_reference]) r where r is not null order by r collate "C" loop
          perform order_revocation_lock(bought.organisation_id, bought.source, ref);
        end loop;
        update "purchase" p set "revoked_at" = checked_at, "revoke_reason" = n.reason, "receipt_status" = 'skipped'
          from (select revocation_notice_reason(bought.organisation_id, bought.source, coalesce(bought.external_order_id, ''),
                  coalesce(bought.payment_reference, ''), bought.product_id) as reason) n
          where p."id" = checked_purchase and p."revoked_at" is null and n.reason is not null;
        if found then return true; end if;
        return exists (select 1 from "purchase" p where p."id" = checked_purchase and p."revoked_at" is not null);
      end $$;`);
    // One key at a time (a sale reports one item, its entry one): each statement finds its row by
    // its key, whatever plan the function's cache holds; a set-wise form's plan hashed both tables
    // read whole.
    this.addSql(`create function "report_item_outcomes"(reports jsonb)
      returns table (delivery_id uuid, organisation_id uuid, platform text, external_order_id text, status text, outcomes text[])
      language plpgsql as $$
      declare
        report record;
        entries uuid[] := '{}';
        entry uuid;
      begin
        for report in select r.item_id, r.outcome, r.reason, r.purchase_id
            from jsonb_to_recordset(reports) as r(item_id uuid, outcome text, reason text, purchase_id uuid) loop
          update "webhook_delivery_item" i set "outcome" = report.outcome, "reason" = report.reason, "purchase_id" = report.purchase_id
            where i."id" = report.item_id and i."outcome" is null;
          entries := entries || (select i."delivery_id" from "webhook_delivery_item" i where i."id" = report.item_id);
        end loop;
        for entry in select distinct e from unnest(entries) e where e is not null order by e loop
          perform 1 from "webhook_delivery" d where d."id" = entry for update;
          return query select d."id", d."organisation_id", d."platform", d."external_order_id", d."status",
              array(select i."outcome" from "webhook_delivery_item" i where i."delivery_id" = entry)
            from "webhook_delivery" d where d."id" = entry;
        end loop;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists "report_item_outcomes"(jsonb);`);
    this.addSql(`drop function if exists "withdraw_before_receipt"(uuid, timestamptz);`);
    this.addSql(`drop function if exists "revocation_notice_reason"(uuid, text, text, text, uuid);`);
    this.addSql(`drop function if exists "order_revocation_lock"(uuid, text, text);`);
  }
}
