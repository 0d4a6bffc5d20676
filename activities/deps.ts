import type { Config } from '../src/config';
import type { Orm } from '../src/db/orm';
import type { Mailer } from '../src/mail/mailer';

/** What every activity factory receives; tests pass real or fake ones. */
export interface ActivityDeps {
  orm: Orm;
  mailer: Mailer;
  config: Pick<Config, 'siteUrl' | 'baseUrl' | 'downloadLinks' | 'updateNoticeRate' | 'outbound' | 'reconcile'>;
}
