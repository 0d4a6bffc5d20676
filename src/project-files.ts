import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * A file of the project that the build does not copy (stylesheets, scripts, data lists), found from
 * the sources (tests) and from the build (dist/src/...): the first ancestor holding package.json is
 * the project root. The production image copies these folders beside dist.
 */
export function projectFile(...segments: string[]): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${segments.join('/')}: project root not found`);
    dir = parent;
  }
  return path.join(dir, ...segments);
}

/** src/http/public: the dashboard's stylesheets and scripts, served as they are (no build step). */
export function publicDir(): string {
  return projectFile('src', 'http', 'public');
}
