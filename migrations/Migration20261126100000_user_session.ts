import { Migration } from '@mikro-orm/migrations';

/** Dashboard sessions the server can end (sign-out, sign out everywhere, idle timeout). */
export class Migration20261126100000_user_session extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "user_session" ("id" text not null, "user_id" uuid not null, "created_at" timestamptz not null, "last_seen_at" timestamptz not null, "user_agent" text null, constraint "user_session_pkey" primary key ("id"));`);
    this.addSql(`create index "user_session_user_id_index" on "user_session" ("user_id");`);
    this.addSql(`create index "user_session_last_seen_at_index" on "user_session" ("last_seen_at");`);
    this.addSql(`alter table "user_session" add constraint "user_session_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "user_session" cascade;`);
  }
}
