import assert from 'node:assert/strict';
import { totpCode } from './totp.ts';
import { ADMIN_TOKEN, type TestService } from './service.ts';

/** An operator's console session: its cookie and its CSRF token (issue 29). */
export interface ConsoleSession {
  cookie: string;
  setCookie: string;
  csrf: string;
}

export interface CreatedOperator {
  operatorId: string;
  name: string;
  credentials: { password: string; totpSecret: string; totpUri: string };
}

export async function createOperatorViaApi(svc: TestService, name: string, role: string): Promise<CreatedOperator> {
  const res = await fetch(`${svc.baseUrl}/internal/admin/v1/operators`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, role }),
  });
  const body = await res.json() as { code: string; data: CreatedOperator };
  assert.equal(body.code, 'SYS_SUCCESS', JSON.stringify(body));
  return body.data;
}

/** Logs in through the console's form with a fresh TOTP code (moving the clock past the last step used). */
export async function consoleLogin(svc: TestService, name: string, password: string, totpSecret: string): Promise<ConsoleSession> {
  svc.clock.advance(30_000);
  const res = await fetch(`${svc.baseUrl}/console/login`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ name, password, code: totpCode(totpSecret, svc.clock.now()) }),
  });
  assert.equal(res.status, 303, `login of ${name}: ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0];
  const home = await fetch(`${svc.baseUrl}/console`, { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await home.text())?.[1];
  assert.ok(csrf, 'the console page carries the CSRF token');
  return { cookie, setCookie, csrf };
}
