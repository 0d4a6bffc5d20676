import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261125215312_initial } from './Migration20261125215312_initial';
import { Migration20261126030000_workflow_dispatch } from './Migration20261126030000_workflow_dispatch';

/** Every migration, in order. A new migration file must be added here too. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261125215312_initial', class: Migration20261125215312_initial },
  { name: 'Migration20261126030000_workflow_dispatch', class: Migration20261126030000_workflow_dispatch },
];
