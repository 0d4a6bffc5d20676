import type { Config } from '../src/config';
import type { Orm } from '../src/db/orm';
import type { Mailer } from '../src/mail/mailer';
import type { EnginePlaces } from '../src/temporal/engine-places';

/** What every activity factory receives; tests pass real or fake ones. */
export interface ActivityDeps {
  orm: Orm;
  mailer: Mailer;
  config: Pick<Config, 'siteUrl' | 'baseUrl' | 'downloadLinks' | 'updateNoticeRate' | 'outbound' | 'reconcile'>;
  /** Told when a run's outcomes are recorded: the dispatcher of the same process, if any, starts the next run at once. */
  enginePlaces?: Pick<EnginePlaces, 'freed'>;
}
