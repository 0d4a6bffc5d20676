import type { MigrationObject } from '@mikro-orm/core';
import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * Every migration of this folder, in name (= time) order: a file `Migration<timestamp>_<what>`
 * exporting a class of the same name. Found by listing the folder, so a new migration is one
 * file; works from the sources (ts-jest) and from the build (dist/migrations).
 */
export const MIGRATIONS: MigrationObject[] = readdirSync(__dirname)
  .filter((file) => /^Migration\d+_\w+\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
  .map((file) => path.basename(file, path.extname(file)))
  .sort()
  .map((name) => ({ name, class: (require(path.join(__dirname, name)) as Record<string, MigrationObject['class']>)[name] }));
