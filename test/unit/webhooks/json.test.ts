import { parseJson, quoteBigIntegers } from '../../../src/webhooks/json';

describe('parseJson', () => {
  it('keeps integers beyond 2^53 digit for digit', () => {
    expect(parseJson('{"id":820982911946154508}')).toEqual({ id: '820982911946154508' });
    expect(parseJson('{"id":-9007199254740993}')).toEqual({ id: '-9007199254740993' });
    expect(parseJson('[12345678901234567890123,1]')).toEqual(['12345678901234567890123', 1]);
  });

  it('leaves small integers, fractions and exponents as numbers', () => {
    expect(parseJson('{"a":5901000000001,"b":29.0,"c":1e3,"d":12345678901234567.5,"e":0,"f":-3}')).toEqual({
      a: 5901000000001,
      b: 29,
      c: 1000,
      d: Number("12345678901234567.5"),
      e: 0,
      f: -3,
    });
  });

  it('handles pretty-printed bodies', () => {
    const text = '{\n  "id" :\t820982911946154508 ,\r\n  "items": [ 1 ,\n 2 ]\n}\n';
    expect(parseJson(text)).toEqual({ id: '820982911946154508', items: [1, 2] });
  });

  it('never touches digits inside strings, whatever the escapes', () => {
    const text = String.raw`{"a":"820982911946154508","b":"x\"820982911946154508\"","c":"\\","d":820982911946154508,"e":"http:\/\/x\/1234567890123456789","f":"\u00e9\u0022 12345678901234567890"}`;
    expect(parseJson(text)).toEqual({
      a: '820982911946154508',
      b: 'x"820982911946154508"',
      c: '\\',
      d: '820982911946154508',
      e: 'http://x/1234567890123456789',
      f: 'é" 12345678901234567890',
    });
  });

  it('keys that look like numbers stay keys', () => {
    expect(parseJson('{"12345678901234567890":12345678901234567890}')).toEqual({
      '12345678901234567890': '12345678901234567890',
    });
  });

  it('returns the text unchanged when nothing needs quoting', () => {
    const text = '{"id":1,"s":"a\\"b"}';
    expect(quoteBigIntegers(text)).toBe(text);
  });

  it('still rejects invalid JSON', () => {
    for (const bad of ['', '{', '{"a":}', '{"a":0123456789012345678}', '12345678901234567890x', '"unterminated', "{'a':1}"]) {
      expect(() => parseJson(bad)).toThrow(SyntaxError);
    }
  });

  it('agrees with JSON.parse on random JSON without big integers', () => {
    for (let i = 0; i < 200; i += 1) {
      const value = {
        n: Math.floor(Math.random() * 1e12),
        f: Math.random() * 100,
        s: String.fromCharCode(...Array.from({ length: 20 }, () => Math.floor(Math.random() * 0x2fff))),
        nested: [{ t: i % 2 === 0, z: null, q: '\\"\u2028/' }],
      };
      const text = JSON.stringify(value, null, i % 3);
      expect(parseJson(text)).toEqual(JSON.parse(text));
    }
  });
});
