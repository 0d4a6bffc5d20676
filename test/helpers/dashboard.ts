import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** `name=value` pairs of a response's Set-Cookie headers, for the next request's Cookie header. */
export function cookiesOf(res: LightMyRequestResponse): Record<string, string> {
  const jar: Record<string, string> = {};
  for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
    const cleared = c.value === '' || c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() <= Date.now());
    if (!cleared) jar[c.name] = c.value;
  }
  return jar;
}

export const cookieHeader = (jar: Record<string, string>): string =>
  Object.entries(jar).map(([k, v]) => `${k}=${v}`).join('; ');

export interface SignedIn {
  cookie: string;
  csrf: string;
}

/** The sign-in form's hidden token and its cookie, as a browser would get them. */
export async function signinForm(app: FastifyInstance): Promise<{ jar: Record<string, string>; token: string }> {
  const res = await app.inject({ method: 'GET', url: '/signin' });
  const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1];
  if (!token) throw new Error(`no sign-in token in ${res.statusCode} ${res.body.slice(0, 200)}`);
  return { jar: cookiesOf(res), token };
}

export async function postSignin(app: FastifyInstance, email: string, password: string, extra: Record<string, string> = {}, remoteAddress = '127.0.0.1') {
  const { jar, token } = await signinForm(app);
  return app.inject({
    method: 'POST',
    url: '/signin',
    remoteAddress,
    headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ email, password, _csrf: token, ...extra }).toString(),
  });
}

/** Signs in through the form and reads the session's CSRF token from a page. */
export async function signIn(app: FastifyInstance, email: string, password = 'correct horse battery'): Promise<SignedIn> {
  const res = await postSignin(app, email, password);
  if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const cookie = cookieHeader(cookiesOf(res));
  const page = await app.inject({ method: 'GET', url: '/', headers: { cookie } });
  const csrf = /data-csrf="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error(`no CSRF token on the page: ${page.statusCode}`);
  return { cookie, csrf };
}
