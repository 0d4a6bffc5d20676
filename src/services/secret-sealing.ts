/**
 * Sealing the secrets at rest again under the key ring's current key, in every table that holds
 * them: integrations' signing secrets and private keys (`integration`), reconciliation's order-API
 * credentials (`integration_reconciliation`) and outbound endpoints' signing secrets
 * (`webhook_endpoint`). Each table's store reads and replaces its own values; a table missed here
 * is one whose values stop opening once `secrets rotate` has reported and the old key is dropped.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { integrationSecretsNotLike, replaceIntegrationSecret } from '../accounts/integration-store';
import { credentialsNotLike, replaceCredentials } from '../accounts/reconciliation-store';
import { endpointSecretsNotLike, replaceEndpointSecret } from '../events/outbound-events';
import type { KeyRing } from '../security/key-ring';
import { openSecret, sealedLike, sealSecret } from '../security/sealed-secrets';

/** Seals each value again; `replace` writes it only if it is still the one read. How many were written. */
async function resealEach<Value extends { stored: string }>(
  em: EntityManager,
  keyRing: KeyRing,
  values: Value[],
  replace: (em: EntityManager, value: Value, sealed: string) => Promise<number>,
): Promise<number> {
  let sealed = 0;
  for (const value of values) sealed += await replace(em, value, sealSecret(keyRing, openSecret(keyRing, value.stored)));
  return sealed;
}

/**
 * Seals every stored secret that is not sealed under the ring's current key: `plain`, the values
 * stored before sealing existed; `not-current`, those too and the values sealed under an older key
 * (`secrets rotate`). Value by value, each update conditional on the value it read, so two processes
 * doing it at once change nothing twice. Returns how many values were sealed.
 */
export async function resealSecrets(em: EntityManager, keyRing: KeyRing, which: 'plain' | 'not-current'): Promise<number> {
  const like = sealedLike(which === 'plain' ? undefined : keyRing.currentId);
  return (await resealEach(em, keyRing, await integrationSecretsNotLike(em, like), replaceIntegrationSecret))
    + (await resealEach(em, keyRing, await credentialsNotLike(em, like), replaceCredentials))
    + (await resealEach(em, keyRing, await endpointSecretsNotLike(em, like), replaceEndpointSecret));
}

/** At start: seals the secrets stored before sealing existed. */
export function sealPlainSecrets(em: EntityManager, keyRing: KeyRing): Promise<number> {
  return resealSecrets(em, keyRing, 'plain');
}
