import { attachmentDisposition } from '../../../src/http/content-disposition';

test.each([
  ['report.pdf', `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`],
  ['Résumé.pdf', `attachment; filename="Resume.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf`],
  ['say "hi" (1).txt', `attachment; filename="say _hi_ (1).txt"; filename*=UTF-8''say%20%22hi%22%20%281%29.txt`],
  ['../../etc/passwd', `attachment; filename=".._.._etc_passwd"; filename*=UTF-8''.._.._etc_passwd`],
  ['a\r\nSet-Cookie: x=1', `attachment; filename="a_Set-Cookie: x=1"; filename*=UTF-8''a_Set-Cookie%3A%20x%3D1`],
  ['100% 日本.zip', `attachment; filename="100_ __.zip"; filename*=UTF-8''100%25%20%E6%97%A5%E6%9C%AC.zip`],
  ['', `attachment; filename="download"; filename*=UTF-8''download`],
])('%j', (name, expected) => {
  expect(attachmentDisposition(name)).toBe(expected);
});
