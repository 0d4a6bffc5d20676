import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * src/http/public (stylesheets and scripts served as they are, no build step), found from the
 * sources (tests) and from the build (dist/src/...): the first ancestor holding package.json is the
 * project root. The production image copies the folder beside dist.
 */
export function publicDir(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('public assets: project root not found');
    dir = parent;
  }
  return path.join(dir, 'src', 'http', 'public');
}
