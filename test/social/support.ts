// Social sign-in test helpers: one full trip start → provider → callback. (A web process whose
// CAIRN_BASE_URL is its real address, for providers to call back to: useWeb({ atBaseUrl: true }).)
export interface CallbackRequest {
  method: 'GET' | 'POST';
  url: string;
  form?: URLSearchParams;
}

/** The provider's answer as the browser would deliver it: a redirect, or Apple's auto-posted form. */
export async function followProvider(authorizeUrl: string): Promise<CallbackRequest> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  if (res.status === 302) return { method: 'GET', url: res.headers.get('location')! };
  const html = await res.text();
  const action = /action="([^"]+)"/.exec(html)?.[1];
  if (res.status !== 200 || !action) throw new Error(`provider answered ${res.status}: ${html.slice(0, 200)}`);
  const form = new URLSearchParams();
  for (const m of html.matchAll(/name="([^"]+)" value="([^"]*)"/g))
    form.set(
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_x, n: string) => String.fromCharCode(Number(n))),
    );
  return { method: 'POST', url: action, form };
}

export async function deliver(cb: CallbackRequest): Promise<Response> {
  return fetch(cb.url, {
    method: cb.method,
    redirect: 'manual',
    ...(cb.form
      ? {
          body: cb.form,
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://appleid.apple.com' },
        }
      : {}),
  });
}
