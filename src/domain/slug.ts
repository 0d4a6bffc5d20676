/**
 * A product slug as the spec wants it: lowercase letters, digits and hyphens. Spaces and
 * underscores become hyphens, any other character is dropped, runs of hyphens collapse to one and
 * hyphens at either end go. The result may be empty: the caller refuses that.
 */
export function normaliseSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-')
    .replace(/[^a-z0-9-]/g, '')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}
