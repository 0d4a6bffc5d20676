/**
 * The operator CLI (decisions §2): `npm run cli -- <command> [flags]`. Every command prints one
 * line of compact JSON on stdout; logs go to stderr; failures exit non-zero with a message.
 */
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config';
import { createOrm, migrate, type Orm } from '../db/orm';
import { startEmbeddedPostgres } from '../dev/embedded-postgres';
import { DomainError, ValidationError } from '../domain/errors';
import { ROLES, type Role } from '../domain/statuses';
import { addKeyToFile, loadKeyRing } from '../security/key-ring';
import { PasswordHasher } from '../security/password-hashing';
import { resealSecrets } from '../services/secret-sealing';
import { migrateStorage } from '../services/storage-migration';
import { openFileStorage } from '../storage/open-file-storage';
import { addOperator, addUser, createOrganisation, setSubscription } from '../services/organisations';

const USAGE = `usage: npm run cli -- <command> [flags]
  org create --name N --owner-email E --owner-password P [--owner-name N] [--subscription-expires YYYY-MM-DD]
  user add --org ORG_ID --email E --password P --role owner|admin|member [--name N]
  org set-subscription --org ORG_ID --expires YYYY-MM-DD
  operator add --email E --password P [--name N]
  secrets rotate
  storage migrate --to s3://BUCKET[/PREFIX]   (S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY for the target)
  migrate`;

type Flags = Record<string, string | undefined>;

function need(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new ValidationError(`--${name} is required\n${USAGE}`);
  return value;
}

async function run(command: string, flags: Flags, orm: Orm, applied: string[], config: Config): Promise<unknown> {
  const em = orm.em.fork();
  const passwords = new PasswordHasher(config.passwordHashCost);
  switch (command) {
    case 'org create':
      return createOrganisation(em, passwords, {
        name: need(flags, 'name'),
        ownerEmail: need(flags, 'owner-email'),
        ownerPassword: need(flags, 'owner-password'),
        ownerName: flags['owner-name'],
        subscriptionExpires: flags['subscription-expires'],
      });
    case 'user add': {
      const role = need(flags, 'role');
      if (!(ROLES as readonly string[]).includes(role)) throw new ValidationError(`--role must be one of ${ROLES.join(', ')}`);
      return addUser(em, passwords, need(flags, 'org'), {
        email: need(flags, 'email'), password: need(flags, 'password'), role: role as Role, name: flags.name,
      });
    }
    case 'org set-subscription':
      return setSubscription(em, need(flags, 'org'), need(flags, 'expires'));
    case 'operator add':
      return addOperator(em, passwords, { email: need(flags, 'email'), password: need(flags, 'password'), name: flags.name });
    case 'secrets rotate': {
      // Embedded: a new key goes first in the key file. With SECRETS_KEY, the operator has put the
      // new key first there. Either way every secret not under the first key is sealed again.
      if (config.secretsKey === undefined) await addKeyToFile(config);
      const keyRing = await loadKeyRing(config);
      return { keyId: keyRing.currentId, resealed: await resealSecrets(em, keyRing, 'not-current') };
    }
    case 'storage migrate': {
      // From the storage in use (local disk, or STORAGE_URL) to the one named, with the same S3 settings.
      const target = loadConfig({ ...process.env, STORAGE_URL: need(flags, 'to') });
      const [from, to] = [await openFileStorage(config), await openFileStorage(target)];
      if (from.description === to.description) throw new ValidationError(`--to names the storage in use (${to.description})`);
      return migrateStorage(em, from, to, (message) => process.stderr.write(`${message}\n`));
    }
    case 'migrate':
      return { applied };
    default:
      throw new ValidationError(`unknown command "${command}"\n${USAGE}`);
  }
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: Object.fromEntries(
      ['name', 'owner-email', 'owner-password', 'owner-name', 'subscription-expires', 'org', 'email', 'password', 'role', 'expires', 'to']
        .map((name) => [name, { type: 'string' as const }]),
    ),
  });
  const command = positionals.join(' ');
  if (!command) throw new ValidationError(USAGE);

  const config = loadConfig();
  const log = { info: (m: string) => process.stderr.write(`${m}\n`), warn: (m: string) => process.stderr.write(`${m}\n`), error: (m: string) => process.stderr.write(`${m}\n`) };
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config, log);
  const orm = await createOrm(config.databaseUrl ?? embedded!.url);
  try {
    const applied = await migrate(orm);
    const result = await run(command, values as Flags, orm, applied, config);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    // A storage migration that left files behind says so in its line, and fails.
    return (result as { failed?: unknown[] }).failed?.length ? 1 : 0;
  } finally {
    await orm.close(true);
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof DomainError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
      ? (error as Error).message
      : ((error as Error).stack ?? String(error));
    process.stderr.write(`error: ${message}\n`);
    process.exit(1);
  },
);
