import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261125215312_initial } from './Migration20261125215312_initial';

/** Every migration, in order. A new migration file must be added here too. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261125215312_initial', class: Migration20261125215312_initial },
];
