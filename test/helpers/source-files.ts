import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** The TypeScript modules of the product's code (src/ and activities/), as paths relative to the root. */
export function productSources(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (full.endsWith('.ts')) found.push(path.relative(ROOT, full));
    }
  };
  walk(path.join(ROOT, 'src'));
  walk(path.join(ROOT, 'activities'));
  return found;
}
