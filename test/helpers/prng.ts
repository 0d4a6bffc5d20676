/** mulberry32: a small deterministic PRNG, so a fuzz failure is reproduced by its seed and index. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const text = (n: number, alphabet = 'abcXYZ019 -_.~%&=?/\\"\'{}[]<>:;,+*@!#$^|`\u00e9\u00ff') =>
    Array.from({ length: n }, () => alphabet[int(alphabet.length)]).join('');
  return { next, int, pick, bytes, text };
}

export type Rng = ReturnType<typeof prng>;
