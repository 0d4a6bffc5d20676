/** Today (UTC) is past the last day of the subscription (`YYYY-MM-DD`, null: never ends). */
export function subscriptionExpired(expiresOn: string | null, now: Date): boolean {
  return expiresOn !== null && now.toISOString().slice(0, 10) > expiresOn;
}
